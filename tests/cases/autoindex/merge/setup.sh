find . -exec touch -h -d '2020-01-02 03:04:05 UTC' {} +
