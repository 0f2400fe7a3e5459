<?php // showthread.php
