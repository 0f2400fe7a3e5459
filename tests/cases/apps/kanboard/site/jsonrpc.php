<?php // json-rpc
