wintercms: vendor/autoload.php
