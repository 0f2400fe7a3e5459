nextcloud-installed: autotest.sh
