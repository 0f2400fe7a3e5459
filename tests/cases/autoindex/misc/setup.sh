# Symbolic links (to a file, to a directory, broken), a listing longer
# than Apache's 8000-byte write buffer, and one fixed time.
ln -s target.txt links/to-file.txt
# A name that is not UTF-8 (Latin-1 e acute), and a long one in UTF-8.
echo x > "links/caf$(printf '\351').txt"
echo y > "links/x$(printf '\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251').txt"
ln -s realdir links/to-dir
ln -s nowhere links/broken
i=0; while [ $i -lt 150 ]; do echo $i > many/file-number-$i.txt; i=$((i+1)); done
find . -exec touch -h -d '2020-01-02 03:04:05 UTC' {} +
