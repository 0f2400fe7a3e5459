mkdir -p ../auth
htpasswd -cbm ../auth/htpasswd alice pw 2>/dev/null
chmod 755 ../auth; chmod 644 ../auth/htpasswd
