static
