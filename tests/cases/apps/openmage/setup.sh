touch -d '2020-01-01 00:00:00 UTC' skin/frontend/rwd/default/css/styles.css media/catalog/product/a.png
