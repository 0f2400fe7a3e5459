concretecms: withphp/index.php
