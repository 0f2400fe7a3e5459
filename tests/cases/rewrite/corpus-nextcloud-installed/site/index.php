nextcloud front controller
