mkdir -p links/sub
ln -s sub links/dirlink.html
ln -s real.html links/filelink.en
touch -d '2020-01-01 00:00:00 UTC' cond/x.html.en cond
