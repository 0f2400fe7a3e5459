: > empty.txt
ln -s f.txt link.txt
ln -s nowhere dangling.txt
printf 'x' > exec.sh
chmod 755 exec.sh
