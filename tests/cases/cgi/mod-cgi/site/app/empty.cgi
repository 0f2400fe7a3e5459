#!/bin/sh
echo "Content-Type: text/plain"
echo "X-Empty: 1"
echo
sleep 0.5
