<?php // admin
