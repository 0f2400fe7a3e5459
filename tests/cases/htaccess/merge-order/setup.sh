mkdir -p empty
