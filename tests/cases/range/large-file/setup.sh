# A 5 MB file with varied content (every line numbered), fixed time stamp.
seq -w 1 500000 | sed 's/$/ abcdefghij/' | head -c 5000000 > big.txt
touch -d '2020-01-01 00:00:00 UTC' big.txt
