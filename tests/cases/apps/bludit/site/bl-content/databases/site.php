<?php defined("BLUDIT") or die(); ?>{}
