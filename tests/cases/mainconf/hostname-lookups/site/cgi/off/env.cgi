#!/bin/sh
# One write, so that the answer never depends on when the output arrives.
printf "Content-Type: text/plain\n\nREMOTE_HOST=%s\nREMOTE_ADDR=%s\n" "${REMOTE_HOST-unset}" "$REMOTE_ADDR"
