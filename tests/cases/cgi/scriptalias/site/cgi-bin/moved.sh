#!/bin/sh
echo "Status: 301"
echo "Location: http://example.com/moved"
echo "Content-Type: text/html"
echo
echo "own body"
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.5
