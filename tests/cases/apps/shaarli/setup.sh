# Git does not keep files inside a .git directory: write them here.
mkdir -p .git && printf '[core]\n' > .git/config
