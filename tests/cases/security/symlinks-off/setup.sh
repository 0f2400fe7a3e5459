ln -s ../target.txt off/link.txt
ln -s ../on off/linkdir
ln -s ../target.txt on/link.txt
