gen() { awk -v t="$2" 'BEGIN{for(i=0;i<400;i++) printf "%s line %d, compressible enough to matter\n", t, i}' > "$1"; }
for d in . rm pre unk env setunk; do gen $d/a.html html; gen $d/a.txt text; gen $d/a.css css; gen $d/a.html.bak bak; gen $d/a.txt.html both; done
gen env/a.png png; gen env/only.html only; gen env/only.txt only; gen env/forced.txt forced
gen pre/x.txt pre; gzip -n -c pre/x.txt > pre/x.txt.gz
touch -d '2020-01-01 00:00:00 UTC' * */*
