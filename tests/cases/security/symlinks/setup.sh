# Links (git keeps them, but their targets outside the tree must be made here).
ln -s target.txt link.txt
ln -s real linkdir
ln -s link.txt link2.txt
ln -s nowhere.txt dangling.txt
mkdir -p ../outside/dir
printf 'outside the document root\n' > ../outside/secret.txt
printf 'outside dir\n' > ../outside/dir/g.txt
ln -s ../outside/secret.txt out.txt
ln -s ../outside/dir outdir
ln -s /etc/hostname hostname.txt
ln -s . self
ln -s loop2 loop1
ln -s loop1 loop2
