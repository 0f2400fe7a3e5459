<?php $databases = [];
