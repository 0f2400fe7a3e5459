<?php /* datastore */
