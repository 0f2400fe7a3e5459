<?php
$n = intval($_GET['n'] ?? 40);
if (isset($_GET['type'])) header('Content-Type: ' . $_GET['type']);
if (isset($_GET['st'])) http_response_code(intval($_GET['st']));
for ($i = 0; $i < $n; $i++) echo "<p>line $i of a compressible page</p>\n";
