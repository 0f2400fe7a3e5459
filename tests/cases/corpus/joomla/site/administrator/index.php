joomla: administrator/index.php
