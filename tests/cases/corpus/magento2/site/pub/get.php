<?php // get
