# One fixed time for everything (the listing prints dates), a few distinct
# ones for sorting by date, and sizes that differ for sorting by size.
head -c 3000 /dev/zero | tr '\0' 'a' > order/b.html
head -c 2000 /dev/zero | tr '\0' 'a' > order-date/B.txt
find . -exec touch -h -d '2020-01-02 03:04:05 UTC' {} +
touch -d '2019-05-06 07:08:09 UTC' order-date/v10.txt
touch -d '2022-05-06 07:08:09 UTC' order-date/a.txt
