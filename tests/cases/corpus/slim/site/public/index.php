<?php // slim
