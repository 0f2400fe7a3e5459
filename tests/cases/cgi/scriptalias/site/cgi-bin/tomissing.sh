#!/bin/sh
echo "Location: /nowhere.txt"
echo
