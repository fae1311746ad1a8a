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
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* "gamma" is also an old libm function that GCC knows as a builtin; ours
 * is unrelated (math.h is not included, and ours takes precedence). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wbuiltin-declaration-mismatch"
#endif

#if defined(__clang__)
#define NODE __attribute__((noinline, used))
#else
#define NODE __attribute__((noipa, used))
#endif

static uint64_t iters_per_unit;
static volatile uint64_t sink;

/* A serial 64-bit LCG + xorshift chain: not vectorisable, not foldable. */
#define SPIN(x, n)                                                                                 \
	do {                                                                                       \
		for (uint64_t i_ = 0; i_ < (n); i_++) {                                            \
			(x) = (x)*6364136223846793005ULL + 1442695040888963407ULL;                 \
			(x) ^= (x) >> 29;                                                          \
		}                                                                                  \
	} while (0)

NODE uint64_t alpha_leaf(uint64_t x, uint64_t units)
{
	SPIN(x, 5 * units);
	return x;
}

NODE uint64_t alpha(uint64_t x, uint64_t units)
{
	uint64_t r = alpha_leaf(x, units);

	sink += r;
	return r + 1;
}

NODE uint64_t beta(uint64_t x, uint64_t units)
{
	SPIN(x, 3 * units);
	sink += x;
	return x + 2;
}

NODE uint64_t gamma_x(uint64_t x, uint64_t units)
{
	SPIN(x, units);
	return x;
}

NODE uint64_t gamma_y(uint64_t x, uint64_t units)
{
	SPIN(x, units);
	return x;
}

NODE uint64_t gamma(uint64_t x, uint64_t units)
{
	uint64_t r = gamma_x(x, units);

	r = gamma_y(r, units);
	sink += r;
	return r + 3;
}

/* One xorshift64 step: the per-round jitter. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NODE void worker(double seconds)
{
	uint64_t seed = 0x9E3779B97F4A7C15ULL, x = 1;
	double end = seconds > 0 ? mono_s() + seconds : 0;
	unsigned long rounds = 0;

	for (;;) {
		uint64_t units = iters_per_unit / 2 + rnd(&seed) % (iters_per_unit + 1);

		x = alpha(x, units);
		x = beta(x, units);
		x = gamma(x, units);
		/* check the clock only now and then: a vDSO call, but keep it rare */
		if (end > 0 && ++rounds % 64 == 0 && mono_s() >= end)
			break;
	}
	sink += x;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SPIN iterations per ~0.5 ms of this thread's CPU time (best of 3). */
static uint64_t calibrate(void)
{
	uint64_t n = 1 << 16, x = 1;
	double best = 1e9;

	for (;;) {
		double t0 = thread_cpu_s();

		SPIN(x, n);
		if (thread_cpu_s() - t0 >= 0.01)
			break;
		n *= 2;
	}
	for (int k = 0; k < 3; k++) {
		double t0 = thread_cpu_s();

		SPIN(x, n);
		double dt = thread_cpu_s() - t0;

		if (dt < best)
			best = dt;
	}
	sink += x;
	uint64_t per = (uint64_t)(n / (best * 2000.0));
	return per ? per : 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;

	if (argc > 2 || seconds < 0) {
		fprintf(stderr, "usage: tree [SECONDS]\n");
		return 2;
	}
	iters_per_unit = calibrate();
	worker(seconds);
	return 0;
}
