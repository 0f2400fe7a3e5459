<?php // member.php
