#!/usr/bin/perl
# Reads its input: with mod_cgid, input left unread resets the socket
# the output shares with it, and Apache's answer is cut.
$| = 1;
local $/;
my $in = <STDIN>;
print "Status: 201 Made\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nperl here: $in\n";
select(undef, undef, undef, 0.5);
