/*
 * floor — a target whose CPU has a floor above zero, for the series and
 * threads end-to-end tests (issue 3).
 *
 *   floor [SECONDS [SLEEP [POLLERS]]]  default: run until killed (exits 0
 *                            after SECONDS); SLEEP: main's rest, default
 *                            1.5 s; POLLERS: how many pollers, default 1
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
 *    With POLLERS > 1 the others are "poller-2", "poller-3", ...: each holds
 *    the same floor (issue 24 item 7: every thread that holds one is named).
 *  - "idler": waits on a condition variable nobody signals: 0% CPU.
 *
 * busy_poll and main_work are noipa so they keep their names in the profile.
 */
#include "target.h"

#include <sys/resource.h>

/* Arithmetic the compiler cannot fold, until clk has advanced by s. A
 * macro, so the profile names busy_poll and main_work, not a shared helper
 * (an inline function would be a frame of its own: stacktop expands
 * inlined functions from DWARF); the inner loop (some tens of us) keeps the
 * clock reads (a system call for the thread CPU clock) a small part of the
 * time. */
#define SPIN_FOR(clk, s)                                                                           \
	do {                                                                                       \
		double end_ = clock_s(clk) + (s);                                                  \
		uint64_t x_ = sink | 1;                                                            \
		while (clock_s(clk) < end_) {                                                      \
			SPIN(x_, 20000);                                                           \
			sink = x_;                                                                 \
		}                                                                                  \
	} while (0)

KEEP void busy_poll(void)
{
	SPIN_FOR(CLOCK_THREAD_CPUTIME_ID, 0.030);
}

KEEP void main_work(void)
{
	SPIN_FOR(CLOCK_MONOTONIC, 1.0);
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
	block_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds, start = mono_s();
	pthread_t poller, idler;
	char name[16];

	/* SLEEP: the main thread's rest between rounds (1.0 gives the 1 s /
	 * 1 s rhythm that one-second buckets alias into a flat line). */
	double rest = argc > 2 ? atof(argv[2]) : 1.5;
	int pollers = argc > 3 ? atoi(argv[3]) : 1;
	if (arg_seconds(argc > 2 ? 2 : argc, argv, "floor [SECONDS [SLEEP [POLLERS]]]", &seconds) ||
	    rest <= 0 || pollers < 1 || pollers > 8)
		return 2;
	if (spawn_named(&poller, run_poller, NULL, "poller") ||
	    spawn_named(&idler, run_idler, NULL, "idler"))
		return 1;
	for (int i = 2; i <= pollers; i++) {
		snprintf(name, sizeof(name), "poller-%d", i);
		if (spawn_named(&poller, run_poller, NULL, name))
			return 1;
	}
	while (seconds == 0 || mono_s() - start < seconds) {
		main_work();
		sleep_s(rest);
	}
	return 0;
}
