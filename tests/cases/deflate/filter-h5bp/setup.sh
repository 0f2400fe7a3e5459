gen() { awk -v t="$2" 'BEGIN{for(i=0;i<400;i++) printf "%s line %d, compressible enough to matter\n", t, i}' > "$1"; }
for d in . sub; do
  gen $d/a.html html; gen $d/a.txt text; gen $d/a.css css; gen $d/a.json json
done
echo tiny > small.html
touch -d '2020-01-01 00:00:00 UTC' * */*
