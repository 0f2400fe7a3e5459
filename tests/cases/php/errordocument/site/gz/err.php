<?php
header("Content-Type: text/plain");
echo str_repeat("maintenance page\n", 20);
