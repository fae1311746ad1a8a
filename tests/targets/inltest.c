/*
 * inltest — a target whose hot code is inlined, for the inline-frame and
 * stripped-binary tests (test_inline.sh).
 *
 *   inltest [SECONDS]      default: run until killed
 *
 * One thread runs inl_outer (noipa: its own function and FDE) in a loop.
 * inl_outer calls two always-inline functions, inl_hot and inl_cold, which
 * do 7 and 3 units of the same arithmetic: with -O2 -g their code is part
 * of inl_outer and only DWARF's inlined-subroutine entries name it. The
 * true shares are inl_hot 70 % and inl_cold 30 % self, inl_outer 100 %
 * total and ~0 % self. A round scales both by one random factor so the
 * round length never locks in phase with the sampling timer.
 *
 * sym.mk builds inltest-stripped (strip --strip-all): no names at all, so
 * all of inl_outer's pcs must still be one function (one FDE).
 */
#include "target.h"

#define UNIT 20000

TARGET_INLINE uint64_t inl_hot(uint64_t x, uint64_t n)
{
	SPIN(x, 7 * n);
	return x;
}

TARGET_INLINE uint64_t inl_cold(uint64_t x, uint64_t n)
{
	SPIN(x, 3 * n);
	return x;
}

KEEP uint64_t inl_outer(uint64_t x, uint64_t n)
{
	x = inl_hot(x, n);
	NO_TAIL();
	x = inl_cold(x, n);
	NO_TAIL();
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	struct timespec t0, t;
	uint64_t x = 1, seed = 88172645463325252ull;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		uint64_t n = UNIT / 2 + xorshift64(&seed) % UNIT;

		x = inl_outer(x, n);
		sink = x;
		if (secs > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
				break;
		}
	}
	return 0;
}
