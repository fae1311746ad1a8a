/*
 * shift — a target whose hot-function split is chosen by argument, and can
 * change mid-run: the known profiles of the differential tests.
 *
 *   shift A/B/C [SWAP_S [EXIT_S]]
 *
 * One thread runs rounds of run_rounds → hot_a, hot_b, hot_c, which do A, B
 * and C units of the same arithmetic (so "60/30/10" gives those shares of
 * its CPU time, "30/60/10" the two first swapped). After SWAP_S seconds
 * (0: never), or on SIGUSR1, A and B trade places: a live diff taken across
 * the swap sees hot_a and hot_b move by A-B points. It exits after EXIT_S
 * seconds (0: runs until killed). As in cpuburn, each round scales all
 * three by one random factor so rounds never lock in phase with a sampling
 * timer, and the leaves make no system calls.
 */
#include "shift.h"

/* Each burns as many iterations as it is told: the split is the caller's. */
SPIN_LEAF(hot_a, 1)
SPIN_LEAF(hot_b, 1)
SPIN_LEAF(hot_c, 1)

int main(int argc, char **argv)
{
	return shift_main(argc, argv, hot_a, hot_b, hot_c);
}
