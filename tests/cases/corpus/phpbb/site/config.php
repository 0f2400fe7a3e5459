<?php $dbpasswd='x';
