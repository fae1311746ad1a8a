/*
 * shift.h — the rounds and the command line shared by the differential
 * tests' targets (shift, shift_caller): three functions given A, B and C
 * units of work a round, A and B trading places after SWAP_S seconds or on
 * SIGUSR1, an exit after EXIT_S seconds.
 *
 *   NAME A/B/C [SWAP_S [EXIT_S]]
 *
 * As in cpuburn, each round scales all three by one random factor so
 * rounds never lock in phase with a sampling timer, and nothing makes a
 * system call in the loop but the clock read.
 */
#ifndef SHIFT_H
#define SHIFT_H

#include "target.h"

#include <signal.h>
#include <stdbool.h>

typedef uint64_t (*shift_work)(uint64_t x, uint64_t units);

static volatile sig_atomic_t swapped;

static void on_usr1(int sig)
{
	swapped = 1;
}

KEEP void run_rounds(shift_work fa, shift_work fb, shift_work fc, unsigned a, unsigned b,
		     unsigned c, double swap_s, double exit_s)
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

		x = fa(x, (sw ? b : a) * u);
		x = fb(x, (sw ? a : b) * u);
		x = fc(x, c * u);
		sink += x;
		if (exit_s > 0 && t >= exit_s)
			break;
	}
	NO_TAIL();
}

/* Parses the command line and runs the rounds; 2 on a bad one. */
static int shift_main(int argc, char **argv, shift_work fa, shift_work fb, shift_work fc)
{
	unsigned a, b, c;
	double swap_s = argc > 2 ? atof(argv[2]) : 0, exit_s = argc > 3 ? atof(argv[3]) : 0;

	if (argc < 2 || argc > 4 || sscanf(argv[1], "%u/%u/%u", &a, &b, &c) != 3 ||
	    a + b + c == 0 || a > 1000 || b > 1000 || c > 1000 || swap_s < 0 || exit_s < 0) {
		fprintf(stderr, "usage: %s A/B/C [SWAP_S [EXIT_S]]   e.g. %s 60/30/10 5\n", argv[0],
			argv[0]);
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	run_rounds(fa, fb, fc, a, b, c, swap_s, exit_s);
	return 0;
}

#endif
