mkdir -p links/sub
ln -s sub links/dirlink.html
ln -s real.html links/filelink.en
