cakephp: src/Controller/x.php
