<?php // symfony
