<?php // media
