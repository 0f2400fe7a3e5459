<?php
header('X-App: 1');
echo "page ", $_SERVER['HTTP2'] ?? 'no', "\n";
