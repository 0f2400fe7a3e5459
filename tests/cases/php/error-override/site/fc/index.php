<?php
http_response_code((int)($_GET["s"] ?? 200));
header("X-From-Script: yes");
echo "script body, status ", http_response_code(), "\n";
