<?php // error page
