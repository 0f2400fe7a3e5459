elgg: vendor/other/x.js
