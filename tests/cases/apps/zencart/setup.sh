touch -d '2020-01-01 00:00:00 UTC' admin/style.css images/large/p.jpg includes/templates/x/css/style.css
