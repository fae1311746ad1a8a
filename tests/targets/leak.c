/*
 * leak — a target whose memory climbs like stairs: it allocates and touches
 * a fixed amount every second and never frees it (issue 3).
 *
 *   leak [MIB_PER_S [CAP_MIB]]     defaults: 4 MiB/s, cap 2048 MiB
 *
 * Ten steps a second (MIB_PER_S / 10 each), every page written so the
 * memory is resident (anonymous RSS), not just reserved. At CAP_MIB it stops
 * growing and only sleeps, so a forgotten run cannot exhaust the machine.
 * Prints nothing; runs until killed.
 */
#include "target.h"

#include <sys/mman.h>

/* Allocate and touch n bytes; never freed: this is the leak. */
KEEP static int leak_bytes(size_t n)
{
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	memset(p, 0xa5, n);
	return 0;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 4, cap = argc > 2 ? atof(argv[2]) : 2048;
	double total = 0;
	struct timespec next;

	if (argc > 3 || !(rate > 0) || !(cap > 0)) {
		fprintf(stderr, "usage: leak [MIB_PER_S [CAP_MIB]]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		double step = rate / 10;

		if (total + step <= cap && leak_bytes((size_t)(step * 1048576)) == 0)
			total += step;
		tick_abs(&next, 100000000);
	}
}
