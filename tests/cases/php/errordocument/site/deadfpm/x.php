<?php echo "never\n";
