#!/bin/sh
echo "Location: http://example.com/elsewhere"
echo
echo "ignored"
