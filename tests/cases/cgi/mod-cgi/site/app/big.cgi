#!/bin/sh
echo "Content-Type: text/plain"
echo
head -c 1000000 /dev/zero | tr '\0' 'x'
sleep 0.5
