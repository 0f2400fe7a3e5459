wordpress: xmlrpc.php
