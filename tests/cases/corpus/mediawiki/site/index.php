<?php // wiki
