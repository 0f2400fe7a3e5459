options
