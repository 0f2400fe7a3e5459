cls
