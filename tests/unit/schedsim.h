/*
 * schedsim.h — threads' schedstat counters as the kernel keeps them, for
 * the busy-floor tests (test_finefloor, test_machine): each thread's
 * state at each millisecond, R running, W waiting on a run queue, S
 * asleep; its run counter grows while it runs, its wait counter by a
 * whole wait when that wait ends (a wait under way at a read is missing
 * from it: the artifact the fine steps give back). Header only; include
 * after cmocka.h.
 */
#ifndef STACKTOP_TEST_SCHEDSIM_H
#define STACKTOP_TEST_SCHEDSIM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/proc/demand.h"

#define SIM_MS 12000 /* the timeline, ms */
#define SIM_NS 1000000ull

struct sim_thread {
	pid_t tid;
	char st[SIM_MS];
};

static inline void sim_fill(struct sim_thread *th, int from, int to, char c)
{
	for (int i = from; i < to && i < SIM_MS; i++)
		if (i >= 0)
			th->st[i] = c;
}

/* A pattern repeated: run_ms in state a, then rest_ms in state b, the
 * cycle shifted by phase_ms. */
static inline void sim_cycle(struct sim_thread *th, pid_t tid, int run_ms, char a, int rest_ms,
			     char b, int phase_ms)
{
	th->tid = tid;
	for (int i = 0; i < SIM_MS; i++)
		th->st[i] = (i + phase_ms) % (run_ms + rest_ms) < run_ms ? a : b;
}

/* A thread runnable all along: runs run_ms, then waits on a run queue a
 * random 0..max_wait_ms (a loaded box), again and again. */
static inline void sim_starved(struct sim_thread *th, pid_t tid, int run_ms, int max_wait_ms,
			       unsigned *seed)
{
	th->tid = tid;
	for (int i = 0; i < SIM_MS;) {
		int w = (int)(rand_r(seed) % (unsigned)(max_wait_ms + 1));

		sim_fill(th, i, i + run_ms, 'R');
		sim_fill(th, i + run_ms, i + run_ms + w, 'W');
		i += run_ms + w;
	}
}

/* th's counters as a read at t_ms sees them. */
static inline struct demand_ns sim_read(const struct sim_thread *th, int t_ms)
{
	uint64_t run = 0, wait = 0, cur = 0;

	for (int i = 0; i < t_ms && i < SIM_MS; i++) {
		if (th->st[i] == 'W') {
			cur++;
		} else {
			wait += cur; /* the wait ended: the kernel adds it now */
			cur = 0;
		}
		run += th->st[i] == 'R';
	}
	return (struct demand_ns){th->tid, run * SIM_NS, (run + wait) * SIM_NS};
}

/* Reads of th[0..n) every step_ms from t0_ms to t1_ms (demand_update, as
 * demand_read would): each step to fn(ctx, t in seconds, step). */
static inline void sim_steps(const struct sim_thread *th, size_t n, int t0_ms, int t1_ms,
			     int step_ms, void (*fn)(void *, double, const struct demand_step *),
			     void *ctx)
{
	static struct demand d;
	struct demand_step st;
	struct demand_ns r[DEMAND_THREADS];

	memset(&d, 0, sizeof(d));
	for (int t = t0_ms; t <= t1_ms; t += step_ms) {
		for (size_t i = 0; i < n; i++)
			r[i] = sim_read(&th[i], t);
		/* +1 s: a first read at 0 ns would be "never read" */
		if (demand_update(&d, (uint64_t)(t + 1000) * SIM_NS, r, n, &st) == 1)
			fn(ctx, t / 1000.0, &st);
	}
}

#endif
