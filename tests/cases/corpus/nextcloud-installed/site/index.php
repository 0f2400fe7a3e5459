<?php // nextcloud
