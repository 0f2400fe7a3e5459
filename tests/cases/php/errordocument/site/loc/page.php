<?php
header('Location: /elsewhere');
echo "moved\n";
