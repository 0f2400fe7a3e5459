wintercms: bootstrap/app.php
