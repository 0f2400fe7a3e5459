<?php echo "x";
