<?php /* SOURCE-MARKER */ echo "x";
