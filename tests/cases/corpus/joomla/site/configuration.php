<?php class JConfig{}
