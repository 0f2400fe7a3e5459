touch -d '2020-01-01 00:00:00 UTC' */f.txt doc.html
