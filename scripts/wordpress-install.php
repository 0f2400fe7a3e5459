<?php
// Installs the WordPress site at DOCROOT (its wp-config.php names the
// database) without the web installer: `php wordpress-install.php DOCROOT`.
// Run by `scripts/wordpress.sh install`. Everything a response shows is
// fixed here (dates, slugs, the application password), so that two copies
// of the database answer alike and requests can name what they ask for.

if ($argc !== 2) {
    fwrite(STDERR, "usage: php wordpress-install.php DOCROOT\n");
    exit(2);
}
$docroot = rtrim($argv[1], '/');

// What wp_install() reads from a web request.
$_SERVER['HTTP_HOST'] = 'localhost';
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_NAME'] = 'localhost';
$_SERVER['SERVER_PORT'] = '80';
define('WP_INSTALLING', true);

require $docroot . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

const SITE = 'http://localhost';
const WHEN = '2024-01-15 10:00:00';
// The application password of `admin`, as sent in `Authorization: Basic`
// (base64 of "admin:htaccelAppPassw0rd1234" in the requests).
const APP_PASSWORD = 'htaccelAppPassw0rd1234';

if (is_blog_installed()) {
    fwrite(STDERR, "already installed\n");
    exit(1);
}
$result = wp_install('htaccel WordPress', 'admin', 'admin@example.com', true, '', 'admin-password-1');
if (is_wp_error($result)) {
    fwrite(STDERR, $result->get_error_message() . "\n");
    exit(1);
}

update_option('siteurl', SITE);
update_option('home', SITE);
update_option('uploads_use_yearmonth_folders', 0);
update_option('timezone_string', 'UTC');

// Pretty permalinks. The rules WordPress keeps in the database are rebuilt
// here; the .htaccess is the real one, copied by wordpress.sh stage.
global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%year%/%monthnum%/%postname%/');
flush_rewrite_rules(false);

$post_id = wp_insert_post([
    'post_title' => 'Hello htaccel',
    'post_name' => 'hello-htaccel',
    'post_content' => "<!-- wp:paragraph -->\n<p>A post served through PHP-FPM.</p>\n<!-- /wp:paragraph -->",
    'post_status' => 'publish',
    'post_author' => 1,
    'post_date' => WHEN,
    'post_date_gmt' => WHEN,
], true);
if (is_wp_error($post_id)) {
    fwrite(STDERR, $post_id->get_error_message() . "\n");
    exit(1);
}

// wp_install() dated its own posts, comment and user "now": fix them.
global $wpdb;
$wpdb->query($wpdb->prepare(
    "UPDATE {$wpdb->posts} SET post_date = %s, post_date_gmt = %s, post_modified = %s, post_modified_gmt = %s",
    WHEN, WHEN, WHEN, WHEN
));
$wpdb->query($wpdb->prepare(
    "UPDATE {$wpdb->comments} SET comment_date = %s, comment_date_gmt = %s",
    WHEN, WHEN
));
$wpdb->query($wpdb->prepare("UPDATE {$wpdb->users} SET user_registered = %s", WHEN));
clean_post_cache($post_id);

// An application password with a known secret (WordPress draws a random one).
$created = WP_Application_Passwords::create_new_application_password(1, ['name' => 'difftest']);
if (is_wp_error($created)) {
    fwrite(STDERR, $created->get_error_message() . "\n");
    exit(1);
}
$items = WP_Application_Passwords::get_user_application_passwords(1);
foreach ($items as &$item) {
    $item['password'] = wp_hash_password(APP_PASSWORD);
    $item['created'] = strtotime(WHEN . ' UTC');
}
unset($item);
update_user_meta(1, WP_Application_Passwords::USERMETA_KEY_APPLICATION_PASSWORDS, $items);

echo "installed: post $post_id at " . get_permalink($post_id) . "\n";
