#!/usr/bin/perl
$| = 1;
print "Content-Type: text/plain\n\n";
my $root = $ENV{DOCUMENT_ROOT};
my $t = $ENV{PATH_TRANSLATED} // '';
$t =~ s/\Q$root\E/DOCROOT/g;
print "other script for $ENV{PATH_INFO} ($t) handler $ENV{REDIRECT_HANDLER}\n";
select(undef, undef, undef, 0.3);
