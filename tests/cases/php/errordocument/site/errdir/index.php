<?php
header("Content-Type: text/plain");
include __DIR__ . "/../err.php";
echo "errdir index\n";
