<?php
$m = $_GET['m'] ?? '';
switch ($m) {
case 'loc': header('Location: /other?x=1'); echo "moved"; break;
case 'locabs': header('Location: http://example.com/x'); break;
case 'loc201': header('Location: /made', true, 201); echo "made"; break;
case 'st': header('Status: 404 Not Found'); header('X-A: 1'); echo "nf"; break;
case 'nope': header('Status: 404 Gone fishing'); echo "nope"; break;
case 'bare': header('Status: 404'); echo "bare"; break;
case 'odd': header('Status: 299'); echo "odd"; break;
case 'st500': http_response_code(500); echo "boom"; break;
case 'st204': http_response_code(204); break;
case 'st304': http_response_code(304); echo "ignored"; break;
case 'cl': header('Content-Length: 5'); echo "hello"; break;
case 'lm': header('Last-Modified: Wed, 01 Jan 2020 00:00:00 GMT'); header('ETag: "x1"'); echo "lm"; break;
case 'future': header('Last-Modified: Wed, 01 Jan 2099 00:00:00 GMT'); echo "f"; break;
case 'badlm': header('Last-Modified: yesterday'); echo "b"; break;
case 'big': echo str_repeat("0123456789abcdef", 20000); break;
case 'flush': echo "first\n"; flush(); usleep(200000); echo "second\n"; break;
case 'err': error_log("a message from php"); echo "e"; break;
case 'ck': setcookie('a', '1'); setcookie('b', '2'); header('X-R: 1'); header('X-R: 2', false); echo "ck"; break;
case 'type': header('Content-Type: Application/JSON; Charset=UTF-8'); echo "{}"; break;
case 'notype': header('Content-Type:'); echo "none"; break;
case 'empty': break;
case 'te': header('Transfer-Encoding: identity'); echo "te"; break;
case 'vary': header('Vary: Cookie'); echo "v"; break;
default: echo "default";
}
