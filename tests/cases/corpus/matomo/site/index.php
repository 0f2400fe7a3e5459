<?php // matomo
