<?php
header('Status: 410 Gone');
echo "gone\n";
