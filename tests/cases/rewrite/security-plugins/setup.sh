# A .git directory cannot be kept in this repository: made here.
set -e
mkdir -p .git
printf '[core]\n' > .git/config
