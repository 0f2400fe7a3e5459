find . -exec touch -h -d '2020-01-01 00:00:00 UTC' {} +
