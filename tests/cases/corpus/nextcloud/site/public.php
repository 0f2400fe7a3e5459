nextcloud: public.php
