<?php // calendar.php
