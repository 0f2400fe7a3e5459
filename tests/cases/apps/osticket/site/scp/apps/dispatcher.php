<?php // scp dispatcher
