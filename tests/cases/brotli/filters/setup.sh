gen() { awk -v t="$2" -v n="$3" 'BEGIN{srand(7); for(i=0;i<n;i++) printf "%s line %d word%d, compressible enough to matter\n", t, i, int(rand()*1000)}' > "$1"; }
for d in bytype setout both deflatefirst provider mime; do
  mkdir -p $d
  gen $d/a.html html 400; gen $d/a.txt text 400; gen $d/a.css css 400; gen $d/big.txt big 6000
  gen $d/huge.txt huge 40000
  echo tiny > $d/tiny.txt
  printf 'GIF89a' > $d/p.gif
done
touch -d '2020-01-01 00:00:00 UTC' * */*
