printf '# comment\nK1 value1\nk2 value2 trailing\n  indented x\nnovalue\nK1 second\nsp%%20 enc\n' > ../map.txt
printf 'one alpha\nmany beta|beta\n' > ../rnd.txt
chmod a+r ../map.txt ../rnd.txt
