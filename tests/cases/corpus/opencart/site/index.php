<?php // opencart
