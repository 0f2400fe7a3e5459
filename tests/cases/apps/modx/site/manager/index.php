<?php // manager
