# Git keeps no empty directories: make the ones this site has.
mkdir -p b/deep c/deep d/deep e/deep f/deep g/deep h/deep i/deep
