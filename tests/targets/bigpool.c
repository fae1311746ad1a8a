/*
 * bigpool — a process with many threads of which few run: THREADS in all
 * (default 1000), BUSY of them (default 2) burning CPU without pause in
 * busy_loop, the rest ("idle-K") blocked in pthread_cond_wait for good.
 * For the scale check of tests/e2e/test_coverage.sh and bench/coverage.sh:
 * per-thread sampling needs a ring and a descriptor per thread, idle or not.
 *
 *   bigpool [THREADS [BUSY [SECONDS]]]   SECONDS 0 or absent: forever
 */
#include "target.h"

#include <stdbool.h>

static KEEP void busy_loop(void)
{
	uint64_t x = 3;
	for (;;) {
		SPIN(x, 100000);
		sink = x;
	}
}

THREAD_RUNS(run_busy, busy_loop)
THREAD_RUNS(run_idle, block_forever)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, busy = argc > 2 ? atoi(argv[2]) : 2;
	double seconds = argc > 3 ? atof(argv[3]) : 0;
	char name[16];

	if (argc > 4 || n < 1 || n > 8192 || busy < 0 || busy >= n || seconds < 0) {
		fprintf(stderr, "usage: bigpool [THREADS [BUSY [SECONDS]]]\n");
		return 2;
	}
	/* The main thread is one of the n: n - 1 more. */
	for (int i = 1; i < n; i++) {
		pthread_t t;
		bool b = i <= busy;
		snprintf(name, sizeof(name), b ? "busy-%d" : "idle-%d", i);
		if (spawn_named(&t, b ? run_busy : run_idle, NULL, name))
			return 1;
	}
	if (seconds == 0)
		block_forever();
	sleep_s(seconds);
	return 0;
}
