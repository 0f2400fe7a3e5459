<?php // pimcore
