#!/bin/sh
echo "Location: /target.txt"
echo
echo "ignored"
