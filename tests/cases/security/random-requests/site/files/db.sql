HTACCEL-SECRET-random-backup
