/*
 * hotloop — a target whose hot function has a known shape, for annotate
 * (issue 16).
 *
 *   hotloop [SECONDS]      default: run until killed
 *
 * hot_loop does a little straight-line set-up, then one tight loop of the
 * SPIN arithmetic (a multiply, an add, a shift and a xor per iteration, a
 * serial chain) 50 million times a call, then a short tail: nearly all of
 * its own samples (far more than 90 %) fall on the loop's instructions, the
 * range between the loop's backward jump and its target. driver calls it
 * in a loop and spins a tenth as long itself between the calls, so it has
 * samples of its own and a call to follow (Enter in the annotate view);
 * nothing else takes CPU. Built with -g (source lines interleave) and
 * stripped as hotloop-stripped (named by its .eh_frame range).
 */
#include "target.h"

KEEP uint64_t hot_loop(uint64_t seed, uint64_t n)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 7;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x ^= x >> 29;
	}
	return x ^ seed;
}

KEEP void driver(double secs)
{
	double t0 = mono_s();
	uint64_t s = 1;

	while (!secs || mono_s() - t0 < secs) {
		s = hot_loop(s, 20000000);
		SPIN(s, 2000000);
		sink = s;
	}
}

int main(int argc, char **argv)
{
	driver(argc > 1 ? atof(argv[1]) : 0);
	return 0;
}
