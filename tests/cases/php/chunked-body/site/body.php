<?php
// What a script learns of the request body: its announced length and
// framing, and what it reads.
header('Content-Type: text/plain');
foreach (['REQUEST_METHOD', 'CONTENT_LENGTH', 'CONTENT_TYPE', 'HTTP_TRANSFER_ENCODING', 'HTTP_EXPECT'] as $k) {
    echo "$k=", $_SERVER[$k] ?? '(unset)', "\n";
}
$in = file_get_contents('php://input');
echo "read=", strlen($in), " md5=", md5($in), "\n";
echo "head=", substr($in, 0, 20), "\n";
echo "post=", json_encode(array_map('strlen', $_POST)), "\n";
