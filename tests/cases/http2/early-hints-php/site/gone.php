<?php
http_response_code(410);
echo "gone\n";
