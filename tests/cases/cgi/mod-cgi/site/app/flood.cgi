#!/bin/sh
# More on standard error than a pipe holds, before the headers.
head -c 70000 /dev/zero | tr '\0' 'e' | fold -w 100 >&2
echo "Content-Type: text/plain"
echo
echo "after the flood"
sleep 0.5
