#!/usr/bin/perl
# bigname.pl IN OUT: copy the ELF64 little-endian executable IN to OUT with
# the st_name of every symbol called f_<digits> set to the offset of the
# longest name in the same string table (hostile_bigname's 1 MiB name), so
# thousands of symbols share one huge name (issue 28 item 3).
use strict;
use warnings;

my ($in, $out) = @ARGV;
open(my $f, '<:raw', $in) or die "$in: $!";
my $img = do { local $/; <$f> };
close($f);
die "$in: not ELF64 LE\n" unless substr($img, 0, 6) eq "\x7fELF\x02\x01";
my ($shoff) = unpack('Q<', substr($img, 0x28, 8));
my ($shentsize, $shnum) = unpack('v v', substr($img, 0x3a, 4));
my @sh;
for my $i (0 .. $shnum - 1) {
	my ($name, $type, $flags, $addr, $off, $size, $link, $info, $align, $entsize) =
	    unpack('V V Q< Q< Q< Q< V V Q< Q<', substr($img, $shoff + $i * $shentsize, 64));
	push @sh, {type => $type, off => $off, size => $size, link => $link, entsize => $entsize};
}
my ($symtab) = grep { $_->{type} == 2 } @sh or die "$in: no .symtab\n";
my $str = $sh[$symtab->{link}];
my $strs = substr($img, $str->{off}, $str->{size});
my $n = $symtab->{size} / $symtab->{entsize};
my ($long, $longlen) = (0, 0);
my @fn;
for my $i (1 .. $n - 1) {
	my $at = $symtab->{off} + $i * $symtab->{entsize};
	my ($st_name) = unpack('V', substr($img, $at, 4));
	my $end = index($strs, "\0", $st_name);
	my $len = $end - $st_name;
	($long, $longlen) = ($st_name, $len) if $len > $longlen;
	push @fn, $at if substr($strs, $st_name, $len) =~ /^f_\d+$/;
}
die "$in: no long name\n" unless $longlen >= (1 << 20);
die "$in: only " . scalar(@fn) . " f_N symbols\n" unless @fn >= 5000;
substr($img, $_, 4) = pack('V', $long) for @fn;
open(my $o, '>:raw', "$out.tmp") or die "$out.tmp: $!";
print $o $img;
close($o) or die "$out.tmp: $!";
chmod 0755, "$out.tmp";
rename("$out.tmp", $out) or die "$out: $!";
printf "%s: %d symbols share one %d-byte name\n", $out, scalar(@fn), $longlen;
