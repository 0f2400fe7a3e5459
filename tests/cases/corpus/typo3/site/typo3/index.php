<?php // backend
