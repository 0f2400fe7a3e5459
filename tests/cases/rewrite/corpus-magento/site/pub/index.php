pub index
