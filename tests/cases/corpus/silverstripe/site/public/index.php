<?php // ss
