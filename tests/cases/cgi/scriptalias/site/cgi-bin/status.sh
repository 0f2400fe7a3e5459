#!/bin/sh
echo "Status: 404 Nowhere"
echo "Content-Type: text/plain"
echo "X-Script: yes"
echo
echo "not here"
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.5
