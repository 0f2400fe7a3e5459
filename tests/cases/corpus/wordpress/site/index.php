<?php /* front controller */
