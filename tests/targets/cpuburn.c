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
#include "target.h"

#include <signal.h>
#include <stdatomic.h>

#define MAX_WORKERS 64

static uint64_t iters_per_unit; /* iterations of SPIN that take ~1 ms */
static atomic_ulong rounds_done;

/* leaf_a is SPIN_LEAF(leaf_a, 6) spelled out: test_batch_shares.sh finds
 * its hot line (-L) by the text of its SPIN. */
KEEP uint64_t leaf_a(uint64_t x, uint64_t units)
{
	SPIN(x, 6 * units);
	return x;
}

SPIN_LEAF(leaf_b, 3)
SPIN_LEAF(leaf_c, 1)

KEEP uint64_t depth_8(uint64_t x, uint64_t units)
{
	x = leaf_a(x, units);
	x = leaf_b(x, units);
	x = leaf_c(x, units);
	sink += x;
	return x + 8;
}

/* Each depth_N calls the next one and then does a little work, so the call
 * is not in tail position and the frame stays on the stack. */
#define DEPTH(n, next)                                                                             \
	KEEP uint64_t depth_##n(uint64_t x, uint64_t units)                                        \
	{                                                                                          \
		uint64_t r = next(x ^ n, units);                                                   \
		sink += r;                                                                         \
		return r + n;                                                                      \
	}
DEPTH(7, depth_8)
DEPTH(6, depth_7)
DEPTH(5, depth_6)
DEPTH(4, depth_5)
DEPTH(3, depth_4)
DEPTH(2, depth_3)
DEPTH(1, depth_2)

KEEP uint64_t work_unit(uint64_t x, uint64_t units)
{
	uint64_t r = depth_1(x, units);
	sink += r;
	return r;
}

KEEP void *run_worker(void *arg)
{
	uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uintptr_t)arg, x = (uintptr_t)arg;

	for (;;) {
		/* 0.5 .. 1.5 units, the same factor for all three leaves */
		uint64_t units = iters_per_unit / 2 + xorshift64(&seed) % (iters_per_unit + 1);

		x = work_unit(x, units);
		atomic_fetch_add_explicit(&rounds_done, 1, memory_order_relaxed);
	}
	return NULL;
}

THREAD_RUNS(run_sleeper, sleep_forever)
THREAD_RUNS(run_waiter, block_forever)

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

/* Every thread but main is detached: nobody joins them. */
static int spawn(void *(*fn)(void *), void *arg, const char *name)
{
	pthread_t t;

	if (spawn_named(&t, fn, arg, name))
		return -1;
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

	iters_per_unit = spin_calibrate(0.001);
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
		sleep_s(t_start + seconds - mono_s());
		report(atomic_load(&rounds_done), mono_s() - t_start);
		return 0;
	}
	for (;;)
		pause();
}
