<?php
// SOURCE-MARKER
echo "a=", $_POST["a"] ?? "-", " b=", $_POST["b"] ?? "-", "\n";
echo "raw=", file_get_contents("php://input"), "\n";
