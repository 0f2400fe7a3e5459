aiowps-6g: xmlrpc.php
