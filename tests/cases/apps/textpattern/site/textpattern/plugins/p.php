php
