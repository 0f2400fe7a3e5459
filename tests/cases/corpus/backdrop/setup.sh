# Git keeps no empty directories: make the ones this site has.
mkdir -p .git layouts
# Git does not keep files inside a .git directory: write them here.
mkdir -p .git && printf 'backdrop: .git/config\n' > .git/config
