mkdir -p ../auth
f=../auth/htpasswd
for u in alice bob carol dave; do htpasswd -bm $( [ -f $f ] || echo -c ) $f $u pw 2>/dev/null; done
printf 'admins: alice bob\n# staff: dave\nstaff :carol  "dave"\n\neditors:alice\n' > ../auth/groups
chmod 755 ../auth; chmod 644 $f ../auth/groups
