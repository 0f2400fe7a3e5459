var u;
