ln -s a.txt list/link.txt
