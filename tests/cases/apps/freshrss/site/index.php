<?php // redirect to p/
