#!/usr/bin/perl
# What a script reached by a local redirect sees of the first script's
# environment (without the long search paths), DOCROOT for the document root.
$| = 1;
print "Content-Type: text/plain\n\n";
my $root = $ENV{DOCUMENT_ROOT};
for my $k (sort keys %ENV) {
    next unless $k =~ /^REDIRECT_/ || $k =~ /^(QUERY_STRING|REQUEST_METHOD|REQUEST_URI|SCRIPT_NAME|CONTENT_LENGTH)$/;
    next if $k =~ /PATH$|LD_LIBRARY_PATH|REMOTE_PORT|SERVER_SOFTWARE|SERVER_SIGNATURE|SERVER_PORT/;
    my $v = $ENV{$k};
    $v =~ s/\Q$root\E/DOCROOT/g;
    print "$k=$v\n";
}
select(undef, undef, undef, 0.5);
