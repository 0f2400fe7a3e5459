<?php // static
