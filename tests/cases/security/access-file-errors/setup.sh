# Access files that are present but cannot be opened, each in its own
# directory. Apache treats only ENOENT and ENOTDIR as "no access file".
ln -s .htaccess loop/.htaccess                 # ELOOP: a link to itself
ln -s b loop2/.htaccess; ln -s .htaccess loop2/b   # ELOOP: two links in a ring
ln -s x loopdir/x; ln -s x/y/.htaccess loopdir/.htaccess  # ELOOP in a directory part
ln -s .htaccess loopsub/.htaccess              # the subtree below a loop
ln -s nowhere dangling/.htaccess               # ENOENT: absent
mkdir isdir/.htaccess                          # a directory
ln -s . todir/.htaccess                        # a link to a directory
ln -s f.txt/x notdir/.htaccess                 # ENOTDIR: absent
ln -s /dev/null devnull/.htaccess              # not a regular file
printf 'Require all granted\n' > noperm/.htaccess; chmod 000 noperm/.htaccess   # EACCES
printf 'Require all granted\n' > ../hidden-ht; chmod 000 ../hidden-ht
ln -s ../../hidden-ht noperm-link/.htaccess    # EACCES through a link
ln -s "$(head -c 300 /dev/zero | tr '\0' n)" toolong/.htaccess   # ENAMETOOLONG
