mkdir -p limit limit20k && cp body.php limit/ && cp body.php limit20k/
