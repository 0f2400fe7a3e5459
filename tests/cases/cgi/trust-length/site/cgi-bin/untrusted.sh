#!/bin/sh
printf "Content-Type: text/plain\r\nContent-Length: 9\r\n\r\nstreamed\n"
