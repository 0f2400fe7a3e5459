silverstripe: public/vendor/v.js
