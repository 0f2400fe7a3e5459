touch -d '2020-01-01 00:00:00 UTC' private/a.txt dl/near.txt private/sub/b.txt
# The ETag mod_xsendfile sends carries the script's time.
touch -d '2021-01-01 00:00:00 UTC' dl/get.php
