remote
