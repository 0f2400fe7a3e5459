<?php // dispatcher
