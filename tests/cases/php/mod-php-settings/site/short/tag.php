<? /* SOURCE-MARKER */ echo "short tags on\n"; ?>
