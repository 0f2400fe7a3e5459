# Git keeps no empty directories: make the ones this site has.
mkdir -p emptydir
# Git does not keep files inside a .git directory: write them here.
mkdir -p .git && printf '[core]\n' > .git/config
