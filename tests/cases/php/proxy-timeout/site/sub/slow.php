<?php
usleep((int)($_GET["ms"] ?? 0) * 1000);
echo "done after ", (int)($_GET["ms"] ?? 0), " ms\n";
