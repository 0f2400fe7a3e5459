#!/bin/sh
# A field name that is no token: refused (500) in strict mode only.
echo "Content-Type: text/plain"
echo "X(Script): 1"
echo
echo "sent"
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.5
