elgg: Gruntfile.js
