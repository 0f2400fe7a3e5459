# Git keeps no empty directories: make the ones this site has.
mkdir -p elgg/actions
# Git keeps no empty directories: make the ones the generated files go in.
mkdir -p h5bp kirby elgg/actions roundcube pimcore
gen() { awk -v t="$2" 'BEGIN{for(i=0;i<400;i++) printf "%s line %d, compressible enough to matter\n", t, i}' > "$1"; }
for d in h5bp kirby elgg elgg/actions roundcube pimcore; do gen $d/a.html html; gen $d/a.css css; gen $d/a.js js; gen $d/a.svg svg; gen $d/a.png png; gen $d/a.txt txt; gen $d/a.json json; done
gen h5bp/a.svgz svgz
touch -d '2020-01-01 00:00:00 UTC' */a.* elgg/actions/a.*
