<?php // shopware
