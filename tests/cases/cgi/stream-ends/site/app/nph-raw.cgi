#!/bin/sh
printf 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nX-Nph: 1\r\n\r\nraw body\n'
