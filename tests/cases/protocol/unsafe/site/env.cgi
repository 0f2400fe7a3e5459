#!/bin/sh
# What the script sees of the request head (and its body, if any).
echo "Content-Type: text/plain"
echo
echo "REQUEST_METHOD=$REQUEST_METHOD"
echo "REQUEST_URI=$REQUEST_URI"
echo "QUERY_STRING=$QUERY_STRING"
echo "SERVER_NAME=$SERVER_NAME"
echo "SERVER_PORT=$SERVER_PORT"
echo "SERVER_PROTOCOL=$SERVER_PROTOCOL"
echo "CONTENT_LENGTH=${CONTENT_LENGTH-unset}"
env | grep '^HTTP_' | LC_ALL=C sort | od -c | sed 's/^[0-7]* *//'
if [ "$REQUEST_METHOD" = POST ]; then
    echo "body:"
    cat
    echo
fi
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.3
