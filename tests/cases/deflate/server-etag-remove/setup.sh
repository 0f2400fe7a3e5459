awk 'BEGIN{srand(7); for(i=0;i<40000;i++){printf "%s%c", (rand()<0.15?"\n":""), 97+int(rand()*26*rand())}}' > big.txt
awk 'BEGIN{for(i=0;i<3000;i++) printf "line %d of a compressible html file <b>bold</b>\n", i}' > mid.html
touch -d '2020-01-01 00:00:00 UTC' *
