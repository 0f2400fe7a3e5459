magento2: Gruntfile.js
