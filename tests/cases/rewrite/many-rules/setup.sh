{ echo 'RewriteEngine On'; i=0; while [ $i -lt 400 ]; do echo "RewriteRule ^r$i\$ /v?$i [R,L]"; i=$((i+1)); done; echo 'RewriteRule ^(.*)$ /v?fallthrough=$1 [R,L]'; } > .htaccess
