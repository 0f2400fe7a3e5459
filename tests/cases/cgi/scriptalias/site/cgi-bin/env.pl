#!/usr/bin/perl
$| = 1;
# The environment the script sees, without what names the server or the
# moment, with the document root (different for the two servers) as DOCROOT.
print "Content-Type: text/plain\n\n";
my $root = $ENV{DOCUMENT_ROOT};
use Cwd;
my $cwd = getcwd();
$cwd =~ s/\Q$root\E/DOCROOT/g;
for my $k (sort keys %ENV) {
    next if $k eq 'REMOTE_PORT' || $k eq 'SERVER_SOFTWARE' || $k eq 'SERVER_SIGNATURE';
    my $v = $ENV{$k};
    $v =~ s/\Q$root\E/DOCROOT/g;
    $v = ":$v" if $k eq 'SERVER_PORT';
    print "$k=$v\n";
}
print "ARGV=", join("|", @ARGV), "\n";
print "CWD=$cwd\n";
# Output still open for a moment: the body goes chunked, for Apache too.
select(undef, undef, undef, 0.5);
