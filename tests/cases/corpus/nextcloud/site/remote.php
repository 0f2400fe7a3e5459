<?php // remote
