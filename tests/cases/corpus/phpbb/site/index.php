<?php // phpbb
