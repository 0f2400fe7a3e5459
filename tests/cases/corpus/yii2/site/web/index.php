<?php // yii
