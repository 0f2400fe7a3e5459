<?php
http_response_code(404);
echo "not found\n";
