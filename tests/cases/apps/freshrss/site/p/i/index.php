<?php // i
