/*
 * floor — a target whose CPU has a floor above zero, for the series and
 * threads end-to-end tests (issue 3).
 *
 *   floor [SECONDS]        default: run until killed (exits 0 after SECONDS)
 *
 * Threads:
 *  - main ("floor"): rounds of ~1 s of work (main_work) and ~1.5 s of sleep.
 *    The sleep is longer than a second on purpose: the profiler reads CPU
 *    once a second at a phase we do not know, and only a sleep of more than
 *    one second plus the drift of the 2.5 s cycle guarantees that at least
 *    every other round holds one whole tick-second with main asleep. With
 *    1 s + 1 s and an unlucky phase every second would hold half a second of
 *    work and the process would look flat at ~80%.
 *  - "poller": busy_poll spins for 30 ms of its own CPU time, then sleeps
 *    70 ms: a constant ~30% of a core that never goes idle — the busy floor.
 *    Spinning on the thread CPU clock (not the wall clock) keeps the duty at
 *    30 ms of CPU per round even when the machine is busy, and the poller
 *    runs at nice -10 when allowed so it gets that CPU promptly.
 *  - "idler": waits on a condition variable nobody signals: 0% CPU.
 *
 * busy_poll and main_work are noipa so they keep their names in the profile.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

static volatile uint64_t sink;
static pthread_mutex_t idle_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = {.tv_sec = (time_t)s,
			      .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Arithmetic the compiler cannot fold, until clk has advanced by s. Inlined,
 * so the profile names busy_poll and main_work, not a shared helper; the
 * inner loop (~20 us) keeps the clock reads (a system call for the thread
 * CPU clock) a small part of the time. */
static inline __attribute__((always_inline)) void spin_for(clockid_t clk, double s)
{
	double end = now_s(clk) + s;
	uint64_t x = sink | 1;

	while (now_s(clk) < end) {
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
	}
}

KEEP void busy_poll(void)
{
	spin_for(CLOCK_THREAD_CPUTIME_ID, 0.030);
}

KEEP void main_work(void)
{
	spin_for(CLOCK_MONOTONIC, 1.0);
}

static void *run_poller(void *arg)
{
	/* A busy floor must look the same on a loaded test machine: at nice
	 * -10 (root only; ignored otherwise) the poller still gets its 30 ms
	 * when other tests keep both cores busy. Bounded at ~30% of a core. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), -10);
	for (;;) {
		busy_poll();
		sleep_s(0.070);
	}
	return NULL;
}

static void *run_idler(void *arg)
{
	pthread_mutex_lock(&idle_mu);
	for (;;)
		pthread_cond_wait(&idle_cv, &idle_mu);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0, start = now_s(CLOCK_MONOTONIC);
	pthread_t poller, idler;

	if (argc > 2 || seconds < 0) {
		fprintf(stderr, "usage: floor [SECONDS]\n");
		return 2;
	}
	if (pthread_create(&poller, NULL, run_poller, NULL) ||
	    pthread_create(&idler, NULL, run_idler, NULL)) {
		fprintf(stderr, "floor: cannot create threads\n");
		return 1;
	}
	pthread_setname_np(poller, "poller");
	pthread_setname_np(idler, "idler");
	while (seconds == 0 || now_s(CLOCK_MONOTONIC) - start < seconds) {
		main_work();
		sleep_s(1.5);
	}
	return 0;
}
