<?php // root
