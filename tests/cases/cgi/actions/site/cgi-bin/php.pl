#!/usr/bin/perl
$| = 1;
# What a PHP-as-CGI binary reads, with the document root (different for
# the two servers) as DOCROOT.
print "Content-Type: text/plain\n\n";
my $root = $ENV{DOCUMENT_ROOT};
for my $k (qw(REQUEST_METHOD REQUEST_URI SCRIPT_NAME PATH_INFO PATH_TRANSLATED
              QUERY_STRING REDIRECT_HANDLER REDIRECT_STATUS REDIRECT_URL
              REDIRECT_QUERY_STRING CONTENT_LENGTH)) {
    my $v = $ENV{$k} // '(unset)';
    $v =~ s/\Q$root\E/DOCROOT/g;
    print "$k=$v\n";
}
my $body = do { local $/; <STDIN> } // '';
print "BODY=$body\n";
# Output still open for a moment: the body goes chunked, for Apache too.
select(undef, undef, undef, 0.3);
