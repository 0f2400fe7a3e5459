#!/bin/sh
# The variables this case is about.
echo "Content-Type: text/plain"
echo
echo "SCRIPT_NAME=$SCRIPT_NAME"
echo "PATH_INFO=${PATH_INFO-unset}"
echo "REQUEST_URI=$REQUEST_URI"
echo "QUERY_STRING=$QUERY_STRING"
echo "HTTP_AUTHORIZATION=${HTTP_AUTHORIZATION-unset}"
echo "FROM_SETENV=${FROM_SETENV-unset}"
echo "REDIRECT_STATUS=${REDIRECT_STATUS-unset}"
echo "REDIRECT_URL=${REDIRECT_URL-unset}"
echo "REQUEST_METHOD=$REQUEST_METHOD"
# Output still open for a moment: the body goes chunked, for Apache too.
sleep 0.5
