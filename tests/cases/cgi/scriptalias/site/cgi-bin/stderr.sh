#!/bin/sh
echo "a warning on stderr" >&2
echo "Content-Type: text/plain"
echo
echo "body after stderr"
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.5
