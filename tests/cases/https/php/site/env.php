<?php
// What a PHP application sees of HTTPS. The whole environment but the
// SSL_* variables (the server's own version, moment and name), then the
// SSL_* variables whose values both TLS libraries can agree on.
header('Content-Type: text/plain');
$skip = ['REQUEST_TIME', 'REQUEST_TIME_FLOAT', 'REMOTE_PORT', 'SERVER_SOFTWARE', 'SERVER_SIGNATURE',
    // Over HTTP/2 (difftest --http2): the connection's number in the server
    'H2_STREAM_TAG', 'REDIRECT_H2_STREAM_TAG'];
$root = $_SERVER['DOCUMENT_ROOT'];
$s = $_SERVER;
ksort($s);
foreach ($s as $k => $v) {
    if (in_array($k, $skip) || strncmp($k, 'SSL_', 4) == 0) continue;
    if (is_array($v)) $v = json_encode($v);
    $v = str_replace($root, 'DOCROOT', $v);
    // Each server's own port is normalised when it follows a colon.
    if ($k == 'SERVER_PORT') $v = ":$v";
    echo "$k=$v\n";
}
foreach (['SSL_TLS_SNI', 'SSL_PROTOCOL', 'SSL_CIPHER_EXPORT', 'SSL_CLIENT_VERIFY',
          'SSL_COMPRESS_METHOD', 'SSL_SESSION_RESUMED', 'SSL_SERVER_M_VERSION',
          'SSL_SERVER_M_SERIAL', 'SSL_SERVER_S_DN', 'SSL_SERVER_I_DN',
          'SSL_SERVER_S_DN_CN', 'SSL_SERVER_S_DN_O', 'SSL_SERVER_S_DN_C',
          'SSL_SERVER_I_DN_CN', 'SSL_SERVER_A_KEY', 'SSL_CLIENT_VERIFY',
          'SSL_CLIENT_S_DN', 'SSL_CLIENT_S_DN_CN', 'SSL_CLIENT_I_DN',
          'SSL_CLIENT_M_SERIAL', 'SSL_CLIENT_A_KEY', 'SSL_SERVER_CERT',
          'SSL_CLIENT_CERT'] as $k) {
    echo "$k=", $_SERVER[$k] ?? '(unset)', "\n";
}
// WordPress's is_ssl().
function is_ssl() {
    if (isset($_SERVER['HTTPS'])) {
        if ('on' === strtolower($_SERVER['HTTPS'])) return true;
        if ('1' === (string) $_SERVER['HTTPS']) return true;
    } elseif (isset($_SERVER['SERVER_PORT']) && ('443' === (string) $_SERVER['SERVER_PORT'])) {
        return true;
    }
    return false;
}
echo "is_ssl=", is_ssl() ? "true" : "false", "\n";
