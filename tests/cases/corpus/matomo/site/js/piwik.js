p
