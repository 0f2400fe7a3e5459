<?php echo "ran ", $_SERVER["SCRIPT_NAME"], "\n";
