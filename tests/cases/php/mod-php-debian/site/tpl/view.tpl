<?php /* SOURCE-MARKER */ echo "tpl ran\n";
