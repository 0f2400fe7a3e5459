q
