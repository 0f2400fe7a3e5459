mkdir -p ../auth
htpasswd -cbm ../auth/htpasswd alice secret 2>/dev/null
htpasswd -bB -C 4 ../auth/htpasswd bob 'pa:ss word' 2>/dev/null
chmod 755 ../auth
chmod 644 ../auth/htpasswd
