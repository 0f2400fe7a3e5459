<?php /* front */
