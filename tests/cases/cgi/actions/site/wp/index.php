<?php $db_password = "SECRET-SOURCE-MARKER"; ?>
