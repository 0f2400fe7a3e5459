<?php $wgSecretKey='x';
