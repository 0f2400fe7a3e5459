backdrop: themes/t/t.tpl.php
