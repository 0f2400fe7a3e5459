<?php // forumdisplay.php
