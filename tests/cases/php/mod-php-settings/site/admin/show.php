<?php /* SOURCE-MARKER */
echo "precision ", ini_get("precision"), " ", 2/3, "\n";
echo "short_open_tag ", ini_get("short_open_tag"), "\n";
