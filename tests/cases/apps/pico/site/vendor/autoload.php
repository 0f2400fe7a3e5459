<?php // autoload
