gen() { awk -v t="$2" 'BEGIN{for(i=0;i<400;i++) printf "%s line %d, compressible enough to matter\n", t, i}' > "$1"; }
for d in . child lower err charset force unknown multi two; do
  gen $d/a.html html; gen $d/a.txt text; gen $d/a.css css; gen $d/a.json json; gen $d/a.svg svg; gen $d/a.lat latin
done
gen missing.html missing; gen err/e.html err
touch -d '2020-01-01 00:00:00 UTC' * */*
