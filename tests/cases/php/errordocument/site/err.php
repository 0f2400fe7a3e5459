<?php
// What an error document sees: the variables that describe the redirect.
header('Content-Type: text/plain');
$root = $_SERVER['DOCUMENT_ROOT'];
$names = ['REDIRECT_STATUS', 'REDIRECT_URL', 'REDIRECT_QUERY_STRING', 'REDIRECT_REQUEST_METHOD',
    'REDIRECT_MYVAR', 'REDIRECT_RWVAR', 'REDIRECT_ERROR_NOTES', 'REDIRECT_HANDLER', 'REDIRECT_REDIRECT_STATUS',
    'MYVAR', 'RWVAR', 'REQUEST_URI', 'REQUEST_METHOD', 'SCRIPT_NAME', 'SCRIPT_FILENAME', 'PATH_INFO',
    'PATH_TRANSLATED', 'QUERY_STRING', 'CONTENT_LENGTH', 'CONTENT_TYPE', 'HTTP_X_TEST'];
foreach ($names as $k) {
    $v = array_key_exists($k, $_SERVER) ? str_replace($root, 'DOCROOT', $_SERVER[$k]) : '(unset)';
    echo "$k=$v\n";
}
$other = [];
foreach ($_SERVER as $k => $v) {
    if (strncmp($k, 'REDIRECT_', 9) == 0 && !in_array($k, $names)) $other[] = $k;
}
sort($other);
echo "other REDIRECT_: ", implode(',', $other), "\n";
echo "GET=", json_encode($_GET), "\n";
echo "input=", file_get_contents('php://input'), "\n";
echo "code=", http_response_code(), "\n";
