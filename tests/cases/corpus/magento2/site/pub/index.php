<?php // pub front
