#!/bin/sh
echo "Set-Cookie: r=1"
echo "Location: /cgi-bin/redirvars.pl?from=redirect"
echo
