# A password file for the group cases (beside the site, as auth/groups does).
mkdir -p ../auth
htpasswd -cbm ../auth/htpasswd u p 2>/dev/null
chmod 755 ../auth; chmod 644 ../auth/htpasswd
