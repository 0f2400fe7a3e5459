<?php
header('Content-Disposition: attachment; filename="file.txt"');
setcookie('k', 'v');
header('X-Script: gone in the second phase');
header('X-Sendfile: f.txt');
echo "script body";
