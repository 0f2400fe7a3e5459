elgg: grunt/g.js
