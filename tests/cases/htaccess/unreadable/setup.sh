printf 'DirectoryIndex f.txt\n' > noperm/.htaccess
chmod 000 noperm/.htaccess
mkdir isdir/.htaccess
ln -s nowhere dangling/.htaccess
# 8192 characters before the newline: one too many.
{ printf 'AddType text/x-long .txt '; head -c 8167 /dev/zero | tr '\0' 'a'; printf '\n'; } > longline/.htaccess
# 8191 characters before the newline: the longest line allowed.
{ printf 'AddType text/x-long .txt '; head -c 8166 /dev/zero | tr '\0' 'a'; printf '\n'; } > longok/.htaccess
printf 'AddType text/x-crlf .txt\r\nDirectoryIndex f.txt\r\n' > crlf/.htaccess
