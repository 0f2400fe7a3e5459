<?php /* config */ ?>
