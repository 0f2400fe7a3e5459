<?php
// SOURCE-MARKER: this comment must never reach a client.
$db_password = "SOURCE-MARKER-secret";
header("X-Script: hello");
echo "hello ", htmlspecialchars($_GET["q"] ?? "nobody"), "\n";
echo "method ", $_SERVER["REQUEST_METHOD"], "\n";
echo "precision ", ini_get("precision"), "\n";
