# The fast-path corpus's Perl script (tests/integration/test_fastpath_corpus.cpp):
# hashes, sorting with a comparator, regular expressions, sprintf, closures,
# die caught by eval at several depths, recursion. Deterministic.
use strict;
use warnings;

my %count;
for my $i (1 .. 400) {
  my $word = join '', map { chr(97 + ($i * $_) % 26) } 1 .. 4;
  $count{$word}++;
}
my @top = (sort { $count{$b} <=> $count{$a} or $a cmp $b } keys %count)[0 .. 4];
print "top: @top\n";

my $text = join ' ', map { "item$_=" . ($_ * 37 % 101) } 1 .. 200;
my @big = grep { $_ > 90 } ($text =~ /item\d+=(\d+)/g);
printf "big values: %d, first %s\n", scalar @big, $big[0];

sub deep { my $n = shift; die "bottom at $n\n" if $n == 0; deep($n - 1) }
for my $d (0 .. 4) {
  eval { deep($d) };
  print "caught: $@";
}

my @adders = map { my $k = $_; sub { $_[0] + $k } } 1 .. 10;
my $sum = 0;
$sum = $_->($sum) for @adders;
print "closures: $sum\n";

sub fib { my $n = shift; $n < 2 ? $n : fib($n - 1) + fib($n - 2) }
print "fib 12 = ", fib(12), "\n";
print STDERR "to stderr\n";
