<?php class Pico {}
