# Fixed dates, so that conditional requests and ETags are the same for both.
find . -exec touch -h -d '2024-03-01 12:00:00 UTC' {} +
