/*
 * cpuburn — a target with a KNOWN profile, for the end-to-end tests and the
 * benchmark.
 *
 *   cpuburn [THREADS [SECONDS]]     defaults: 1 worker, run until killed
 *
 * Each worker thread ("worker-N") runs rounds of
 *
 *   run_worker → work_unit → depth_1 → … → depth_8 → leaf_a, leaf_b, leaf_c
 *
 * where leaf_a, leaf_b and leaf_c do 6, 3 and 1 units of the same arithmetic
 * loop, so the true shares of the worker's CPU time are 60/30/10 %. The work
 * is a fixed number of iterations (calibrated once at start so a unit is
 * about 1 ms) rather than "spin until the thread CPU clock moved": the ratio
 * is then exact whatever the machine or interrupts do, the leaves make no
 * system calls (no kernel frames under them), and the throughput figure
 * measures real work done per wall second, so it drops when a profiler steals
 * CPU from the target. Each round scales all three leaves by one random
 * factor (0.5..1.5) so the round length never locks in phase with a sampling
 * timer (a 10 ms round sampled at 100 Hz would otherwise always land in the
 * same leaf).
 *
 * Every function on the chain is noipa (no inlining, cloning or IPA) and does
 * work after its call, so the chain survives -O2 without tail calls. Built
 * without frame pointers: a profiler must unwind it through DWARF CFI.
 *
 * Other threads: "sleeper" (nanosleep), "waiter" (pthread_cond_wait) and
 * "reporter" (sigwait for SIGUSR1); they take no CPU. The main thread sleeps.
 *
 * Output, one line each to stdout (for bench/run.sh):
 *   on SIGUSR1: the throughput since the previous report (or start);
 *   at exit after SECONDS, or on SIGTERM/SIGINT: the throughput since start.
 *   cpuburn: rounds_per_s=412.7 rounds=1238 seconds=3.000 threads=1
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define CHAIN __attribute__((noinline, used))
#else
#define CHAIN __attribute__((noipa, used))
#endif

#define MAX_WORKERS 64

static uint64_t iters_per_unit; /* iterations of SPIN that take ~1 ms */
static atomic_ulong rounds_done;
static volatile uint64_t sink; /* defeats dead-code elimination */

/* The arithmetic every leaf does: a 64-bit LCG plus a xorshift, a serial
 * dependency chain the compiler cannot vectorise or fold. A macro, not a
 * function, so each leaf owns its loop (and its source line with -L). */
#define SPIN(x, n)                                                                           \
	do {                                                                                 \
		for (uint64_t i_ = 0; i_ < (n); i_++) {                                      \
			(x) = (x)*6364136223846793005ULL + 1442695040888963407ULL;           \
			(x) ^= (x) >> 29;                                                    \
		}                                                                            \
	} while (0)

CHAIN uint64_t leaf_a(uint64_t x, uint64_t units)
{
	SPIN(x, 6 * units);
	return x;
}

CHAIN uint64_t leaf_b(uint64_t x, uint64_t units)
{
	SPIN(x, 3 * units);
	return x;
}

CHAIN uint64_t leaf_c(uint64_t x, uint64_t units)
{
	SPIN(x, 1 * units);
	return x;
}

CHAIN uint64_t depth_8(uint64_t x, uint64_t units)
{
	x = leaf_a(x, units);
	x = leaf_b(x, units);
	x = leaf_c(x, units);
	sink += x;
	return x + 8;
}

/* Each depth_N calls the next one and then does a little work, so the call
 * is not in tail position and the frame stays on the stack. */
#define DEPTH(n, next)                                                                       \
	CHAIN uint64_t depth_##n(uint64_t x, uint64_t units)                                 \
	{                                                                                    \
		uint64_t r = next(x ^ n, units);                                             \
		sink += r;                                                                   \
		return r + n;                                                                \
	}
DEPTH(7, depth_8)
DEPTH(6, depth_7)
DEPTH(5, depth_6)
DEPTH(4, depth_5)
DEPTH(3, depth_4)
DEPTH(2, depth_3)
DEPTH(1, depth_2)

CHAIN uint64_t work_unit(uint64_t x, uint64_t units)
{
	uint64_t r = depth_1(x, units);
	sink += r;
	return r;
}

/* One xorshift64 step: the per-round jitter. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

CHAIN void *run_worker(void *arg)
{
	uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uintptr_t)arg, x = (uintptr_t)arg;

	for (;;) {
		/* 0.5 .. 1.5 units, the same factor for all three leaves */
		uint64_t units = iters_per_unit / 2 + rnd(&seed) % (iters_per_unit + 1);

		x = work_unit(x, units);
		atomic_fetch_add_explicit(&rounds_done, 1, memory_order_relaxed);
	}
	return NULL;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* How many SPIN iterations take 1 ms of this thread's CPU time. Takes the
 * fastest of a few 10 ms runs, so a preemption does not skew it. */
static uint64_t calibrate(void)
{
	uint64_t n = 1 << 16, x = 1;
	double best = 1e9;

	for (;;) {
		double t0 = thread_cpu_s();

		SPIN(x, n);
		double dt = thread_cpu_s() - t0;

		if (dt >= 0.01)
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
	uint64_t per_ms = (uint64_t)(n / (best * 1000.0));
	return per_ms ? per_ms : 1;
}

static void *run_sleeper(void *arg)
{
	for (;;) {
		struct timespec ts = {.tv_sec = 1};

		nanosleep(&ts, NULL);
	}
	return NULL;
}

static pthread_mutex_t wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cv = PTHREAD_COND_INITIALIZER;

static void *run_waiter(void *arg)
{
	pthread_mutex_lock(&wait_mu);
	for (;;)
		pthread_cond_wait(&wait_cv, &wait_mu); /* never signalled */
	return NULL;
}

static int nworkers = 1;
static double t_start;

static void report(unsigned long rounds, double secs)
{
	printf("cpuburn: rounds_per_s=%.1f rounds=%lu seconds=%.3f threads=%d\n",
	       secs > 0 ? rounds / secs : 0.0, rounds, secs, nworkers);
	fflush(stdout);
}

/* Owns SIGUSR1/SIGTERM/SIGINT (blocked in every other thread): reports the
 * throughput since the last SIGUSR1, or since start before exiting. */
static void *run_reporter(void *arg)
{
	sigset_t *set = arg;
	unsigned long last_rounds = 0;
	double last_t = t_start;

	for (;;) {
		int sig;

		if (sigwait(set, &sig) != 0)
			continue;
		unsigned long r = atomic_load(&rounds_done);
		double now = mono_s();

		if (sig == SIGUSR1) {
			report(r - last_rounds, now - last_t);
			last_rounds = r;
			last_t = now;
		} else {
			report(r, now - t_start);
			_exit(0);
		}
	}
	return NULL;
}

static int spawn(void *(*fn)(void *), void *arg, const char *name)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);

	if (err) {
		fprintf(stderr, "cpuburn: pthread_create: %s\n", strerror(err));
		return -1;
	}
	pthread_setname_np(t, name);
	pthread_detach(t);
	return 0;
}

int main(int argc, char **argv)
{
	double seconds = 0;
	static sigset_t set;

	if (argc > 1)
		nworkers = atoi(argv[1]);
	if (argc > 2)
		seconds = atof(argv[2]);
	if (nworkers < 1 || nworkers > MAX_WORKERS || seconds < 0 || argc > 3) {
		fprintf(stderr, "usage: cpuburn [THREADS (1..%d) [SECONDS]]\n", MAX_WORKERS);
		return 2;
	}

	/* Block the report signals before any thread exists, so only the
	 * reporter thread receives them. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	iters_per_unit = calibrate();
	t_start = mono_s();

	if (spawn(run_reporter, &set, "reporter") || spawn(run_sleeper, NULL, "sleeper") ||
	    spawn(run_waiter, NULL, "waiter"))
		return 1;
	for (int i = 0; i < nworkers; i++) {
		char name[24];

		snprintf(name, sizeof(name), "worker-%d", i);
		if (spawn(run_worker, (void *)(uintptr_t)(i + 1), name))
			return 1;
	}

	if (seconds > 0) {
		double end = t_start + seconds, now;

		while ((now = mono_s()) < end) {
			double left = end - now;
			struct timespec ts = {.tv_sec = (time_t)left,
					      .tv_nsec = (long)((left - (time_t)left) * 1e9)};

			nanosleep(&ts, NULL);
		}
		report(atomic_load(&rounds_done), mono_s() - t_start);
		return 0;
	}
	for (;;)
		pause();
}
