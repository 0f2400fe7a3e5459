touch -d '2020-01-01 00:00:00 UTC' dl/f.txt
touch -d '2021-01-01 00:00:00 UTC' dl/get.php
