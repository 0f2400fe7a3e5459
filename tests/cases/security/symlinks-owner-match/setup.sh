# Owners cannot be kept by git: set them here (needs root).
ln -s root.txt d/same.txt
ln -s root.txt d/link-by-www.txt
chown -h www-data:www-data d/link-by-www.txt
chown www-data:www-data d/www.txt
ln -s www.txt d/to-www.txt
ln -s www.txt d/www-to-www.txt
chown -h www-data:www-data d/www-to-www.txt
