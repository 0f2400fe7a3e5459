joomla api
