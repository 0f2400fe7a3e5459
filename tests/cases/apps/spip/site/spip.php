<?php // spip
