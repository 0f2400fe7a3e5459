elgg: bower_components/b.js
