<?php
header('Content-Type: text/plain');
$root = $_SERVER['DOCUMENT_ROOT'];
foreach (['SCRIPT_NAME', 'SCRIPT_FILENAME', 'PATH_INFO', 'PATH_TRANSLATED', 'REQUEST_URI', 'QUERY_STRING', 'REDIRECT_URL', 'REDIRECT_STATUS', 'REDIRECT_QUERY_STRING', 'REDIRECT_HTTP_AUTHORIZATION', 'HTTP_AUTHORIZATION', 'PHP_SELF', 'REQUEST_METHOD', 'FROM_REWRITE', 'REDIRECT_FROM_REWRITE'] as $k) {
    $v = $_SERVER[$k] ?? '(unset)';
    echo "$k=", str_replace($root, 'DOCROOT', $v), "\n";
}
echo "GET=", json_encode($_GET), "\n";
