# A store as Apache's mod_md leaves it for MDPrivateKeys secp256r1: the
# certificate of store.test and its key under the key type's file names.
set -e
d=../md/domains/store.test
mkdir -p $d
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout $d/privkey.secp256r1.pem -out $d/pubcert.secp256r1.pem -days 90 \
    -subj /CN=store.test -addext subjectAltName=DNS:store.test,DNS:www.store.test \
    -addext basicConstraints=critical,CA:FALSE 2>/dev/null
chmod 600 $d/privkey.secp256r1.pem
touch -d '2020-01-01 00:00:00 UTC' index.html
