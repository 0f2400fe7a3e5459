admin
