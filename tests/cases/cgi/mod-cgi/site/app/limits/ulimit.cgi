#!/bin/bash
echo "Content-Type: text/plain"
echo
echo "cpu $(ulimit -t) $(ulimit -H -t)"
echo "mem $(ulimit -v)"
echo "nproc $(ulimit -u)"
sleep 0.5
