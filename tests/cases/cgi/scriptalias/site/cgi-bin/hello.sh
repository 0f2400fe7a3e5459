#!/bin/sh
echo "Content-Type: text/plain"
echo
echo "hello from sh"
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.5
