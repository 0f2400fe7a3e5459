<?php
header("Status: 503 Service Unavailable");
echo "down\n";
