login
