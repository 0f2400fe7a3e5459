<?php
// SOURCE-MARKER
http_response_code(201);
header("Content-Type: text/plain; charset=utf-8");
echo "created\n";
