shopware: custom/plugins/p.php
