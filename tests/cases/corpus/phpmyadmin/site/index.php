<?php // pma
