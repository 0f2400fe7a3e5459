nextcloud-installed: build/b.sh
