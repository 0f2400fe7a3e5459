# A listing too long to be measured before it is sent (chunked over HTTP/1.1).
mkdir big
i=0
while [ $i -lt 400 ]; do
    : > "big/file-with-a-long-name-$i.txt"
    i=$((i + 1))
done
touch -d '2020-01-01 00:00:00 UTC' big big/*
