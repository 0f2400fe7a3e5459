aiowps-classic: wp-comments-post.php
