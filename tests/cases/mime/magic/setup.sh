# Files without an extension mod_mime knows, made here (git keeps no
# binary files in cases); each long enough for a rule's 64-byte read.
pad() { head -c 200 /dev/zero; }
{ printf '\211PNG\r\n\032\n'; pad; } > png
{ printf 'GIF89a'; pad; } > gif
{ printf '\377\330\377\340'; pad; } > jpeg
{ printf '%%PDF-1.4\n'; pad; } > pdf
{ printf '#!/bin/sh\necho hi\n'; pad; } > script
{ printf '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n'; pad; } > drawing
{ printf '<?xml version="1.0"?>\n<root/>\n'; pad; } > data
{ printf '/* XPM */\n'; pad; } > pixmap
{ printf '.snd\0\0\0\0\0\0\0\0\0\0\0\002'; pad; } > sound
printf 'The quick brown fox\n' > words
printf 'a page\n<html>\n' > page
printf '.TH TITLE 1\n' > manual
printf 'c fortran comment\n' > fortran
printf 'Received: by host\n' > mail
printf 'Newsgroups: comp.x\n' > news
printf 'the \033[1mbold\033[0m\n' > escapes
printf 'notes\n' > notes
: > empty
printf '\211PNG\r\n\032\n' > short
printf '<p>rev</p>\n' > rev.html
printf 'old\n' > 'rev.html@3'
printf 'plain text for gzip: The end\n' | gzip -n -c > text-gz
gzip -n -c < png > png-gz
printf 'x' | gzip -n -c | head -c 12 > broken-gz
mkdir -p tardir && printf 'inside\n' > tardir/f && tar --format=ustar --mtime='2020-01-01' -cf archive tardir/f && rm -r tardir
mkdir -p list && cp png list/ && cp words list/ && cp text-gz list/ && cp notes list/
touch -d '2021-03-04 05:06:07 UTC' * list/*
