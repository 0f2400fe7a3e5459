matomo: core/Access.php
