<?php
// The environment PHP sees, without what names the server or the moment,
// with the document root (different for the two servers) as DOCROOT.
header('Content-Type: text/plain');
$skip = ['REQUEST_TIME', 'REQUEST_TIME_FLOAT', 'REMOTE_PORT', 'SERVER_SOFTWARE', 'SERVER_SIGNATURE'];
$root = $_SERVER['DOCUMENT_ROOT'];
$s = $_SERVER;
ksort($s);
foreach ($s as $k => $v) {
    if (in_array($k, $skip)) continue;
    if (is_array($v)) $v = json_encode($v);
    $v = str_replace($root, 'DOCROOT', $v);
    if ($k == 'SERVER_PORT') $v = ":$v";
    echo "$k=$v\n";
}
echo "input=", file_get_contents('php://input'), "\n";
echo "post=", json_encode($_POST), "\n";
