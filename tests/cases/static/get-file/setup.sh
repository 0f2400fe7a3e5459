# A binary file with every byte value, and a larger file (git keeps neither well).
awk 'BEGIN { for (i = 0; i < 256; i++) printf "%c", i }' > bytes.bin
head -c 300000 /dev/zero | tr '\0' 'x' > big.txt
touch -d '2020-01-01 00:00:00 UTC' bytes.bin big.txt
