<?php $CONFIG=[];
