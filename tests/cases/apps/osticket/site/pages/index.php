<?php // pages
