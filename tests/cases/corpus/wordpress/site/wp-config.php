<?php define('DB_PASSWORD','secret');
