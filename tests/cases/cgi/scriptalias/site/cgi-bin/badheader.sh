#!/bin/sh
echo "this is not a header"
echo
