<?php // index.php
