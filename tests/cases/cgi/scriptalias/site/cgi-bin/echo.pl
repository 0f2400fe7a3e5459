#!/usr/bin/perl
$| = 1;
# The request body back, read to its end (a chunked body has no CONTENT_LENGTH).
binmode STDIN; binmode STDOUT;
local $/;
my $body = <STDIN>;
$body = '' unless defined $body;
print "Content-Type: application/octet-stream\n";
print "X-Length: ", length($body), "\n";
print "X-Content-Length: ", ($ENV{CONTENT_LENGTH} // 'unset'), "\n\n";
print $body;
# Output still open for a moment: the body goes chunked, for Apache too.
select(undef, undef, undef, 0.5);
