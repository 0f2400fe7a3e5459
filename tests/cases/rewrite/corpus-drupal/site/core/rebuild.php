rebuild
