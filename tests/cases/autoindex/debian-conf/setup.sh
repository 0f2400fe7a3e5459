# Sizes on both sides of apr_strfsize's steps, an empty directory, and one
# fixed time for everything so that the listing's dates agree.
head -c 5000 /dev/zero | tr '\0' 'z' > five-k.dat
head -c 1100000 /dev/zero | tr '\0' 'm' > one-m.dat
head -c 972 /dev/zero | tr '\0' 'a' > s972.dat
head -c 973 /dev/zero | tr '\0' 'a' > s973.dat
head -c 10240 /dev/zero | tr '\0' 'a' > s10k.dat
mkdir -p empty
find . -exec touch -h -d '2020-01-02 03:04:05 UTC' {} +
touch -d '2021-06-07 08:09:10 UTC' a.txt sub
