var d;
