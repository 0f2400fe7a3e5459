<?php // front
