#!/bin/sh
# Its end comes after its head was read: Apache cannot measure the body.
printf "Content-Type: text/plain\r\nContent-Length: 9\r\n\r\n"
sleep 0.3
printf "streamed\n"
