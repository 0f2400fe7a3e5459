<?php // index
