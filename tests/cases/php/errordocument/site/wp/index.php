<?php
header('Content-Type: text/plain');
include __DIR__ . '/../err.php';
echo "wp front controller\n";
echo "REDIRECT_FRONT=", $_SERVER['REDIRECT_FRONT'] ?? '(unset)', "\n";
echo "REDIRECT_REDIRECT_STATUS=", $_SERVER['REDIRECT_REDIRECT_STATUS'] ?? '(unset)', "\n";
echo "REDIRECT_REDIRECT_URL=", $_SERVER['REDIRECT_REDIRECT_URL'] ?? '(unset)', "\n";
