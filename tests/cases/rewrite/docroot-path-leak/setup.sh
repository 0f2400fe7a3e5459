ln -sfn "$PWD" /tmp/htaccel-rewrite-leak-docroot
