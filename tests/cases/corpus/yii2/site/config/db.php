yii2: config/db.php
