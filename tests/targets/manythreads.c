/*
 * manythreads — a target with many threads: N threads ("worker-K",
 * default 100) that sleep, and a main thread that works in bursts of 15 ms
 * every 75 ms (busy_bit: ~20% of a core, long enough for cpu-clock, which
 * restarts its period when a thread is scheduled in). For
 * the file-descriptor test (tests/e2e/test_fds.sh): a sampler needs
 * descriptors per thread, and under a low RLIMIT_NOFILE some threads cannot
 * be sampled.
 *
 *   manythreads [THREADS [SECONDS]]   SECONDS 0 or absent: forever
 */
#include "target.h"

static KEEP void busy_bit(void)
{
	double end = mono_s() + 0.015;
	uint64_t x = 7;
	while (mono_s() < end)
		SPIN(x, 1000);
	sink = x;
	NO_TAIL();
}

static void *run_worker(void *arg)
{
	sleep_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	double seconds = argc > 2 ? atof(argv[2]) : 0;
	char name[16];

	if (n < 1 || n > 4096 || seconds < 0 || argc > 3) {
		fprintf(stderr, "usage: manythreads [THREADS [SECONDS]]\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		pthread_t t;
		snprintf(name, sizeof(name), "worker-%d", i);
		if (spawn_named(&t, run_worker, NULL, name)) {
			fprintf(stderr, "manythreads: cannot start thread %d\n", i);
			return 1;
		}
	}
	for (double end = mono_s() + seconds; seconds == 0 || mono_s() < end;) {
		busy_bit();
		sleep_s(0.06);
	}
	return 0;
}
