aiowps-6g: wp-comments-post.php
