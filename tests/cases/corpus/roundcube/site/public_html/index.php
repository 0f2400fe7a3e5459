<?php // rc
