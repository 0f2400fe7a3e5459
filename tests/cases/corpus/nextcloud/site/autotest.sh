nextcloud: autotest.sh
