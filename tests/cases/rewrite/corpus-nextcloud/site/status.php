status
