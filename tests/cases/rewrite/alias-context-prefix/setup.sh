mkdir -p ../aliased/ign
printf 'aliased a\n' > ../aliased/a.html
printf 'aliased ign a\n' > ../aliased/ign/a.html
printf 'RewriteEngine On\nRewriteRule ^x$ a.html [L]\nRewriteRule ^r$ a.html [R,L]\nRewriteRule ^v$ /f.txt?p=%%{CONTEXT_PREFIX}&r=%%{CONTEXT_DOCUMENT_ROOT} [R,L]\n' > ../aliased/.htaccess
printf 'RewriteEngine On\nRewriteOptions IgnoreContextInfo\nRewriteRule ^x$ a.html [L]\n' > ../aliased/ign/.htaccess
chmod -R a+rX ../aliased
ln -sfn "$(cd ../aliased && pwd)" /tmp/htaccel-rewrite-alias-target
