<?php
$f = $_GET['f'] ?? '';
if ($f !== '' && $f[0] == '~') $f = $_SERVER['DOCUMENT_ROOT'] . substr($f, 1);
if (isset($_GET['lm'])) header('Last-Modified: Wed, 01 Jan 2020 00:00:00 GMT');
if (isset($_GET['et'])) header('ETag: "script"');
if (isset($_GET['ce'])) header('Content-Encoding: gzip');
if (isset($_GET['cl'])) header('Content-Length: 11');
if (isset($_GET['st'])) http_response_code(404);
if (isset($_GET['type'])) header('Content-Type: application/octet-stream');
header('Content-Disposition: attachment; filename="file.txt"');
header("X-Sendfile: $f");
echo "script body";
