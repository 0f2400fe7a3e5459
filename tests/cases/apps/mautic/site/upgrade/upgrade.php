<?php // upgrade
