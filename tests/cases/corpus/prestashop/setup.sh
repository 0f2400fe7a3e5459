# Git keeps no empty directories: make the ones this site has.
mkdir -p admin-dev/filemanager
