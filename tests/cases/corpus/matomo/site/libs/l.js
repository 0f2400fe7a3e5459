l
