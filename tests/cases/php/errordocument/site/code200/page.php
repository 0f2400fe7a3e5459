<?php
http_response_code(200);
header('X-From: page');
echo "found after all\n";
