<?php echo "shop"; ?>
