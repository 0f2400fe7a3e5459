nextcloud-installed: public.php
