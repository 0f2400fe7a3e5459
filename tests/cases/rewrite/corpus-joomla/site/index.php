joomla front controller
