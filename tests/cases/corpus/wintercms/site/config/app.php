wintercms: config/app.php
