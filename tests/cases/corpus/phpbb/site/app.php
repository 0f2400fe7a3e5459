<?php // app
