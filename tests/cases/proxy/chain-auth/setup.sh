mkdir -p ../auth
htpasswd -cbm ../auth/htpasswd alice secret 2>/dev/null
chmod 755 ../auth
chmod 644 ../auth/htpasswd
