<?php /* front controller */ ?>
