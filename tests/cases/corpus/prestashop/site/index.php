<?php // shop
