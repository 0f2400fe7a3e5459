# A file outside both sites that both servers send for the upstream's
# X-Sendfile (the upstream runs in the sandbox: @CWD@ there).
mkdir -p ../shared
printf 'sent by the proxy\n' > ../shared/big.txt
touch -d '2020-01-01 00:00:00 UTC' ../shared/big.txt
