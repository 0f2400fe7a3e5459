<?php
// SOURCE-MARKER
header("Location: /hello.php?q=again", true, 302);
