# Files outside both sites, the same for both servers: sent for the
# application's X-Sendfile and served directly under /direct/.
mkdir -p ../shared
i=0
while [ $i -lt 180 ]; do printf 'row %04d: 0123456789abcdef\n' $i; i=$((i + 1)); done > ../shared/doc.bin
printf '<h1>sent</h1>\n' > ../shared/page.html
printf 'plain text\n' > ../shared/note.txt
touch -d '2020-01-01 00:00:00 UTC' ../shared/doc.bin ../shared/page.html ../shared/note.txt
