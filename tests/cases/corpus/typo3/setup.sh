# Git keeps no empty directories: make the ones this site has.
mkdir -p .git empty
# Git does not keep files inside a .git directory: write them here.
mkdir -p .git && printf 'typo3: .git/HEAD\n' > .git/HEAD
