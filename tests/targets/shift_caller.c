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
#include "target.h"

#include <signal.h>
#include <stdbool.h>

static volatile sig_atomic_t swapped;

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

static void on_usr1(int sig)
{
	swapped = 1;
}

KEEP void run_rounds(unsigned a, unsigned b, unsigned c, double swap_s, double exit_s)
{
	/* A fixed unit, no calibration (see shift.c). */
	uint64_t unit = 20000, seed = 0x9E3779B97F4A7C15ULL, x = 1;
	double t0 = mono_s();

	for (;;) {
		/* 0.5 .. 1.5 units (tens of µs), the same factor for all three */
		uint64_t u = unit / 2 + xorshift64(&seed) % (unit + 1);
		double t = mono_s() - t0;
		bool sw = swapped || (swap_s > 0 && t >= swap_s);

		x = leaf_a(x, (sw ? b : a) * u);
		x = leaf_b(x, (sw ? a : b) * u);
		x = rest(x, c * u);
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
		fprintf(
		    stderr,
		    "usage: shift_caller A/B/C [SWAP_S [EXIT_S]]   e.g. shift_caller 60/30/10 5\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	run_rounds(a, b, c, swap_s, exit_s);
	return 0;
}
