export{}
