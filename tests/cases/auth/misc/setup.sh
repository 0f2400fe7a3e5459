mkdir -p ../auth
htpasswd -cbm ../auth/htpasswd alice pw 2>/dev/null
htpasswd -bm ../auth/htpasswd 'jürgen' 'pässword' 2>/dev/null
htpasswd -bm ../auth/htpasswd 'sp ace' 'a b:c' 2>/dev/null
chmod 755 ../auth; chmod 644 ../auth/htpasswd
