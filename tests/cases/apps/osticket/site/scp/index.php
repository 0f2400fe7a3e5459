<?php // scp
