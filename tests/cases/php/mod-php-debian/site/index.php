<?php /* SOURCE-MARKER */ echo "index ran\n";
