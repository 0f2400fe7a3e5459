touch -d '2020-01-01 00:00:00 UTC' mod.txt m.txt old.txt
