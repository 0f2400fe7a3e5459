awk 'BEGIN{srand(7); for(i=0;i<40000;i++){printf "%s%c", (rand()<0.15?"\n":""), 97+int(rand()*26*rand())}}' > big.txt
awk 'BEGIN{for(i=0;i<3000;i++) printf "line %d of a compressible html file <b>bold</b>\n", i}' > mid.html
printf '0123456789' > tiny.txt
awk 'BEGIN{for(i=0;i<68;i++) printf "a"}' > b68.txt
awk 'BEGIN{for(i=0;i<69;i++) printf "a"}' > b69.txt
: > empty.txt
printf '<html><body>gone but compressible gone but compressible gone but compressible</body></html>\n' > gone.html
awk 'BEGIN{srand(9); for(i=0;i<2000000;i++){printf "%s%c", (rand()<0.1?"\n":""), 33+int(rand()*90)}}' > huge.txt
touch -d '2020-01-01 00:00:00 UTC' *
