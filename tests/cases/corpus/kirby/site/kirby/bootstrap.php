kirby: kirby/bootstrap.php
