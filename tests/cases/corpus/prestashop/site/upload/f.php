<?php evil
