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
#include "target.h"

#include <signal.h>
#include <stdbool.h>

static volatile sig_atomic_t swapped;

/* Each burns as many iterations as it is told: the split is the caller's. */
SPIN_LEAF(hot_a, 1)
SPIN_LEAF(hot_b, 1)
SPIN_LEAF(hot_c, 1)

static void on_usr1(int sig)
{
	swapped = 1;
}

KEEP void run_rounds(unsigned a, unsigned b, unsigned c, double swap_s, double exit_s)
{
	/* A fixed unit, no calibration: its CPU at start would be a row of its
	 * own, and the split is in units whatever a unit takes. */
	uint64_t unit = 20000, seed = 0x9E3779B97F4A7C15ULL, x = 1;
	double t0 = mono_s();

	for (;;) {
		/* 0.5 .. 1.5 units (tens of µs), the same factor for all three */
		uint64_t u = unit / 2 + xorshift64(&seed) % (unit + 1);
		double t = mono_s() - t0;
		bool sw = swapped || (swap_s > 0 && t >= swap_s);

		x = hot_a(x, (sw ? b : a) * u);
		x = hot_b(x, (sw ? a : b) * u);
		x = hot_c(x, c * u);
		sink += x;
		if (exit_s > 0 && t >= exit_s)
			break;
	}
	NO_TAIL();
}

int main(int argc, char **argv)
{
	unsigned a, b, c;
	double swap_s = argc > 2 ? atof(argv[2]) : 0, exit_s = argc > 3 ? atof(argv[3]) : 0;

	if (argc < 2 || argc > 4 || sscanf(argv[1], "%u/%u/%u", &a, &b, &c) != 3 ||
	    a + b + c == 0 || a > 1000 || b > 1000 || c > 1000 || swap_s < 0 || exit_s < 0) {
		fprintf(stderr, "usage: shift A/B/C [SWAP_S [EXIT_S]]   e.g. shift 60/30/10 5\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	run_rounds(a, b, c, swap_s, exit_s);
	return 0;
}
