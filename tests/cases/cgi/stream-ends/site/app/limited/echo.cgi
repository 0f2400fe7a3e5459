#!/bin/sh
echo "Content-Type: text/plain"
echo
echo "method=$REQUEST_METHOD length=${CONTENT_LENGTH-unset}"
cat
sleep 0.5
