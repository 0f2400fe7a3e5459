# Git keeps no empty directories: make the ones this site has.
mkdir -p sub/noindex
touch -d '2020-01-01 00:00:00 UTC' sub/a.css
