<?php
echo "error page for ", $_SERVER["REDIRECT_STATUS"] ?? "-", " from ", $_SERVER["REDIRECT_URL"] ?? "-", "\n";
