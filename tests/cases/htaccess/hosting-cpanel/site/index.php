<?php echo "front controller"; ?>
