<?php /* SOURCE-MARKER */
echo "error page for ", $_SERVER["REDIRECT_URL"] ?? "?", " status ", $_SERVER["REDIRECT_STATUS"] ?? "?", "\n";
