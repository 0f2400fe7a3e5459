core
