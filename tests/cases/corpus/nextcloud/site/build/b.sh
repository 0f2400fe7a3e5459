nextcloud: build/b.sh
