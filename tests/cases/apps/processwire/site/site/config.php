cfg
