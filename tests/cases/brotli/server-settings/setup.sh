gen() { awk -v t="$2" -v n="$3" 'BEGIN{srand(11); for(i=0;i<n;i++) printf "%s line %d word%d, compressible enough to matter\n", t, i, int(rand()*1000)}' > "$1"; }
gen a.html html 400; gen b.txt text 3000; echo tiny > c.txt
mkdir -p bad; gen bad/a.html html 10
touch -d '2020-01-01 00:00:00 UTC' * */*
