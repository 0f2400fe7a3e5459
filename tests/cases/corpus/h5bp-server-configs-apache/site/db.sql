h5bp-server-configs-apache: db.sql
