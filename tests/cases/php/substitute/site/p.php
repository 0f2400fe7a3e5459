<?php
$n = intval($_GET['n'] ?? 40);
if (isset($_GET['type'])) header('Content-Type: ' . $_GET['type']);
if (isset($_GET['st'])) http_response_code(intval($_GET['st']));
for ($i = 0; $i < $n; $i++) {
    echo "<p>line $i links to <a href=\"HTTP://OLD.EXAMPLE/page/$i\">it</a></p>\n";
    if (isset($_GET['flush']) && $i % 100 == 0) flush();
}
if (isset($_GET['tail'])) echo "no newline after this line";
