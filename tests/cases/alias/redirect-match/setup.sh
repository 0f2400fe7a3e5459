# Git keeps no empty directories: make the ones this site has.
mkdir -p ci/.git magento/.git shop/.git sub/.git sub/deep typo3/.git
# Git does not keep files inside a .git directory: write them here.
mkdir -p magento/.git && printf 'x\n' > magento/.git/config
mkdir -p typo3/.git && printf 'x\n' > typo3/.git/HEAD
