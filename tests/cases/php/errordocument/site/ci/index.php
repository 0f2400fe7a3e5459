<?php
header('Content-Type: text/plain');
include __DIR__ . '/../err.php';
echo "ci front controller\n";
