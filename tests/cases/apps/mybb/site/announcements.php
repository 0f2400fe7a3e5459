<?php // announcements.php
