gen() { awk -v t="$2" 'BEGIN{for(i=0;i<400;i++) printf "%s line %d, compressible enough to matter\n", t, i}' > "$1"; }
for d in plain order resp harness child child/sub bang eq minus unknown errdoc both mime \
         e-provider e-expr e-protocol e-pname e-trace e-declare e-chainonly; do
  mkdir -p $d
  gen $d/a.html html; gen $d/a.txt text; gen $d/a.css css; gen $d/a.json json
done
gen missing.html missing
touch -d '2020-01-01 00:00:00 UTC' * */* */*/*
