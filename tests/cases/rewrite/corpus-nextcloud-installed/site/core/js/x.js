js
