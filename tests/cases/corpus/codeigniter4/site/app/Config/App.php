codeigniter4: app/Config/App.php
