.q
