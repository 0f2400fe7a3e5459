<?php
header('Content-Type: text/plain');
foreach (['SERVER_PROTOCOL', 'REQUEST_METHOD', 'REQUEST_URI', 'HTTP_HOST', 'HTTP2', 'H2_STREAM_ID', 'HTTP_UPGRADE', 'HTTP_HTTP2_SETTINGS', 'HTTP_CONNECTION', 'HTTP_X_TEST', 'CONTENT_LENGTH'] as $k) {
    echo $k, '=', $_SERVER[$k] ?? '-', "\n";
}
echo 'body=', file_get_contents('php://input'), "\n";
