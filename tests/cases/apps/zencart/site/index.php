<?php // store
