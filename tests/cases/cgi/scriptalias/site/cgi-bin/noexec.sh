#!/bin/sh
echo "Content-Type: text/plain"
echo
echo "SECRET-SOURCE-MARKER"
