<?php // thumbnails
