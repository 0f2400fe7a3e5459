var a;
