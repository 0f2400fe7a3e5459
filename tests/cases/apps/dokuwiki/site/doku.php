<?php // doku
