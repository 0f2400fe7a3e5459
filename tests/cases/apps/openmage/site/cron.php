<?php // cron
