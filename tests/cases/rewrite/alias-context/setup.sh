mkdir -p ../aliased ../aliased2
printf 'aliased a\n' > ../aliased/a.html
printf 'aliased2 a\n' > ../aliased2/a.html
printf 'RewriteEngine On\nRewriteRule ^x$ a.html [L]\nRewriteRule ^b$ /al/a.html [L]\nRewriteRule ^c/(.*)$ /f.txt?c=$1 [R]\n' > ../aliased/.htaccess
printf 'RewriteEngine On\nRewriteOptions IgnoreContextInfo\nRewriteRule ^x$ a.html [L]\n' > ../aliased2/.htaccess
chmod -R a+rX ../aliased ../aliased2
