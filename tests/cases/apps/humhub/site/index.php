<?php // front controller
