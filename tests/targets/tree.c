/*
 * tree — a target with a KNOWN call tree, for the icicle tests.
 *
 *   tree [SECONDS]      default: run until killed
 *
 * The main thread runs rounds of
 *
 *   main → worker ─┬─ alpha → alpha_leaf          50 %
 *                  ├─ beta                        30 %
 *                  └─ gamma ─┬─ gamma_x           10 %
 *                            └─ gamma_y           10 %
 *
 * The shares are of the worker's CPU time: each function on the right does
 * 5, 3, 1 and 1 units of the same arithmetic loop (beta does its own work,
 * so it is a leaf with self time; alpha and gamma only call). A unit is a
 * fixed number of iterations calibrated once at start to ~0.5 ms, so the
 * ratios are exact whatever the machine does; each round scales all units
 * by one random factor (0.5..1.5) so the round never locks in phase with a
 * sampling timer. No system calls inside a round: no kernel frames below
 * the leaves.
 *
 * Every function on the tree is noipa (no inlining, cloning or IPA) and
 * does work after its calls, so no call is a tail call under -O2, and the
 * build has no frame pointers: a profiler must unwind it through DWARF CFI.
 */
#include "target.h"

/* "gamma" is also an old libm function that GCC knows as a builtin; ours
 * is unrelated (math.h is not included, and ours takes precedence). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wbuiltin-declaration-mismatch"
#endif

static uint64_t iters_per_unit;

SPIN_LEAF(alpha_leaf, 5)

KEEP uint64_t alpha(uint64_t x, uint64_t units)
{
	uint64_t r = alpha_leaf(x, units);

	sink += r;
	return r + 1;
}

KEEP uint64_t beta(uint64_t x, uint64_t units)
{
	SPIN(x, 3 * units);
	sink += x;
	return x + 2;
}

SPIN_LEAF(gamma_x, 1)
SPIN_LEAF(gamma_y, 1)

KEEP uint64_t gamma(uint64_t x, uint64_t units)
{
	uint64_t r = gamma_x(x, units);

	r = gamma_y(r, units);
	sink += r;
	return r + 3;
}

KEEP void worker(double seconds)
{
	uint64_t seed = 0x9E3779B97F4A7C15ULL, x = 1;
	double end = seconds > 0 ? mono_s() + seconds : 0;
	unsigned long rounds = 0;

	for (;;) {
		uint64_t units = iters_per_unit / 2 + xorshift64(&seed) % (iters_per_unit + 1);

		x = alpha(x, units);
		x = beta(x, units);
		x = gamma(x, units);
		/* check the clock only now and then: a vDSO call, but keep it rare */
		if (end > 0 && ++rounds % 64 == 0 && mono_s() >= end)
			break;
	}
	sink += x;
}

int main(int argc, char **argv)
{
	double seconds;

	if (arg_seconds(argc, argv, "tree [SECONDS]", &seconds))
		return 2;
	iters_per_unit = spin_calibrate(0.0005);
	worker(seconds);
	return 0;
}
