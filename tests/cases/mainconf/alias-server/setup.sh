mkdir -p ../aliased/dir ../scripts ../ungranted ../never
printf 'from the alias target\n' > ../aliased/a.txt
printf 'in dir\n' > ../aliased/dir/b.txt
printf 'Redirect 301 /al/dir/r /from-alias-htaccess\n' > ../aliased/dir/.htaccess
printf '#!/bin/sh\necho Content-Type: text/plain\necho\necho hi\n' > ../scripts/hello.cgi
printf 'secret\n' > ../ungranted/s.txt
