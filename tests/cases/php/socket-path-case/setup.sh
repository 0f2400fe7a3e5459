# A path with capitals to the case's pool: <sandbox>/Pool/PHP-FPM.sock.
mkdir -p ../../Pool
ln -s ../fpm/php-fpm.sock ../../Pool/PHP-FPM.sock
