<?php // winter
