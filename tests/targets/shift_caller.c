/*
 * shift_caller — a hot path that moves from one caller to another while the
 * leaf stays the same: the regression a diff of own time alone misses.
 *
 *   shift_caller A/B/C [SWAP_S [EXIT_S]]
 *
 * One thread runs rounds of run_rounds → leaf_a → spin, leaf_b → spin and
 * rest, with A, B and C units of the same arithmetic: "60/30/10" gives
 * leaf_a 60% of its CPU time in total and leaf_b 30%, while spin, the leaf
 * both call, has 90% own time and leaf_a, leaf_b next to none. After
 * SWAP_S seconds (0: never), or on SIGUSR1, A and B trade places: leaf_a's
 * and leaf_b's totals move by A-B points, spin's own share does not. It
 * exits after EXIT_S seconds (0: runs until killed). As in shift, each
 * round scales all three by one random factor so rounds never lock in
 * phase with a sampling timer, and nothing makes a system call in the
 * loop but the clock read.
 */
#include "shift.h"

/* The one leaf both callers run: its own share is theirs summed. */
SPIN_LEAF(spin, 1)
SPIN_LEAF(rest, 1)

/* Callers with no work of their own: their time is spin's, seen only in
 * their total share. The empty asm after the call keeps each on the
 * stack (no tail call). */
KEEP uint64_t leaf_a(uint64_t x, uint64_t units)
{
	x = spin(x, units);
	NO_TAIL();
	return x;
}

KEEP uint64_t leaf_b(uint64_t x, uint64_t units)
{
	x = spin(x, units);
	NO_TAIL();
	return x;
}

int main(int argc, char **argv)
{
	return shift_main(argc, argv, leaf_a, leaf_b, rest);
}
