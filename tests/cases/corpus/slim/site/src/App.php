slim: src/App.php
