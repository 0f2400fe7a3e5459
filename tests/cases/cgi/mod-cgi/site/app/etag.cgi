#!/bin/sh
echo 'ETag: "v1"'
echo "Content-Type: text/plain"
echo "Content-Length: 999"
echo
echo "tagged"
sleep 0.5
