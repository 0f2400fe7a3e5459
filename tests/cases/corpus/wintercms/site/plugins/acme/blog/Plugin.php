wintercms: plugins/acme/blog/Plugin.php
