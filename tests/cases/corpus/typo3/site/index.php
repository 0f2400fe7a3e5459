<?php // typo3
