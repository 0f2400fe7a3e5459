mkdir -p limit limit20k sendcl && cp body.php limit/ && cp body.php limit20k/ && cp body.php sendcl/ && cp body.php down.php
