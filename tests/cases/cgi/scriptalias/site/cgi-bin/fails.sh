#!/bin/sh
echo "dying" >&2
exit 3
