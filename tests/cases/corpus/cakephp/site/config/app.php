cakephp: config/app.php
