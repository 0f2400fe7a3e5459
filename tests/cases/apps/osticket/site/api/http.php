<?php // api
