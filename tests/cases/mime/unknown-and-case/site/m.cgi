m.cgi
