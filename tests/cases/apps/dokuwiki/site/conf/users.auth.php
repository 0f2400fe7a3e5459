users
