<?php // front controller placeholder
