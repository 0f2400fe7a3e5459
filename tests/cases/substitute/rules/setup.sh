lines() { printf 'foo one\nbar foo two foo\nthe end, foo\n'; }
for d in basic multi quick single regex fixed limit inherit inherit/child inherit/before order bytype mime provider; do
  mkdir -p $d
  lines > $d/a.txt
  lines > $d/a.html
  printf 'foo without a newline foo' > $d/nonl.txt
  : > $d/empty.txt
done
printf 'aaa\naa\nabc\ndef\nac\nx-x-x\nme@host.com and you@there.com\nA.B a.b axb aAa\n' > regex/r.txt
cp regex/r.txt fixed/r.txt; cp regex/r.txt multi/r.txt; cp regex/r.txt quick/r.txt; cp regex/r.txt single/r.txt
awk 'BEGIN{for(i=0;i<3000;i++) printf "line %d says foo and more foo to compress\n", i}' > order/big.txt
cp order/big.txt bytype/big.txt
# Over 4 MiB: Apache reads it in two pieces, with a line across the edge.
awk 'BEGIN{for(i=0;i<120000;i++) printf "row %06d foo and the rest of a longer line\n", i}' > order/huge.txt
awk 'BEGIN{s=""; for(i=0;i<300;i++) s=s "x"; print s "foo"}' > limit/long.txt
awk 'BEGIN{s=""; for(i=0;i<300;i++) s=s "x"; print s "baz"}' > limit/long-nomatch.txt
awk 'BEGIN{s=""; for(i=0;i<300;i++) s=s "y"; printf "%s", s}' > limit/long-last.txt
awk 'BEGIN{for(i=0;i<5;i++) print "foo"; s=""; for(i=0;i<300;i++) s=s "x"; print s "foo"; print "end foo"}' > limit/late.txt
for b in bad-s bad-flag bad-regex bad-incomplete bad-length; do mkdir -p $b; echo hi > $b/a.txt; done
touch -d '2020-01-01 00:00:00 UTC' * */* */*/*
