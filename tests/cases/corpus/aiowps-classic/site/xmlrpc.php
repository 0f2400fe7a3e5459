aiowps-classic: xmlrpc.php
