/*
 * shortthreads — a process that lives on short-lived threads: SPAWNERS
 * threads (default 2) each create a thread, join it, and pause, over and
 * over. Every created thread ("short") burns JOB_MS of CPU (default 1.5)
 * in short_job and exits, so no thread lives long enough for a /proc
 * rescan to see it: only events that follow new threads by themselves
 * (inherit) sample them. The pause after each join keeps the total near
 * CORES (default 1.5) cores of CPU, nearly all of it in short_job.
 *
 *   shortthreads [SECONDS [CORES [JOB_MS]]]   SECONDS 0 or absent: forever
 *
 * Prints nothing; for tests/e2e/test_coverage.sh and bench/coverage.sh.
 */
#include "target.h"

static uint64_t spins_per_job;
static double pause_s;

/* The whole life of a short thread: a fixed amount of arithmetic. */
static KEEP void *short_job(void *arg)
{
	uint64_t x = (uintptr_t)arg | 1;
	SPIN(x, spins_per_job);
	sink = x;
	NO_TAIL();
	return NULL;
}

static void *run_spawner(void *arg)
{
	uintptr_t k = 0;
	for (;;) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_job, (void *)++k) == 0)
			pthread_join(t, NULL);
		sleep_s(pause_s);
	}
	return arg;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, cores = argc > 2 ? atof(argv[2]) : 1.5;
	double job_ms = argc > 3 ? atof(argv[3]) : 1.5;
	int spawners = (int)(cores + 0.999);

	if (argc > 4 || seconds < 0 || !(cores > 0) || cores > 64 || !(job_ms > 0)) {
		fprintf(stderr, "usage: shortthreads [SECONDS [CORES [JOB_MS]]]\n");
		return 2;
	}
	spins_per_job = spin_calibrate(job_ms / 1000);
	/* Each spawner runs a job for job_ms, then pauses: cores / spawners busy. */
	double duty = cores / spawners;
	pause_s = job_ms / 1000 * (1 / duty - 1);
	for (int i = 0; i < spawners; i++) {
		pthread_t t;
		if (spawn_named(&t, run_spawner, NULL, "spawner"))
			return 1;
	}
	if (seconds == 0)
		block_forever();
	sleep_s(seconds);
	return 0;
}
