<?php echo "private\n";
