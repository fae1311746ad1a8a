/*
 * finefloor — a process's busy floor decided on steps of a fraction of a
 * second, while its one-second history is too short to say (proc/machine
 * reads it for a floor candidate's first MACHINE_MIN_S seconds): with
 * steps of ~0.2 s, `stacktop -a -b -n 2` names a floor within two
 * seconds.
 *
 *   finefloor_read (procfs: demand_read, then finefloor_step)
 *   finefloor_step (pure: one step's threads' deltas; tests feed it)
 *   finefloor_eval (pure: the verdict over the steps kept)
 *
 * A step: each thread read at both of its ends (proc/demand, at most
 * DEMAND_THREADS): its CPU (ns it ran) and its demand (ran + waited on a
 * run queue), as % of one core; the process's CPU is its threads' sum.
 *
 * The kernel adds a thread's wait on a run queue when the wait ends: a
 * wait under way at a read is missing from that step and comes whole in
 * the next, where, capped at the step, a steady worker starved by load
 * would read low, full, low... and look bursty. So the newest step stays
 * pending until the next read, which gives each thread's excess (its
 * demand beyond the new step's length: a wait begun before it) back to
 * the pending step, up to that step's length. A wait of more than a step
 * still leaves the step before short (at 0.2 s: a single wait of ~0.4 s,
 * a run queue of a hundred busy threads a core).
 *
 * The verdict, over the steps kept:
 *  - a thread bursts when its demand is >= FINEFLOOR_BUSY_PCT at one step
 *    where it ran FINEFLOOR_BUSY_RUN_PCT (a housekeeping thread that wakes
 *    and waits long on a loaded box's run queue, to run for a moment, is
 *    no burst), and under FINEFLOOR_ASLEEP_PCT at FINEFLOOR_PAUSE_MIN
 *    published steps (not the pending one: its demand may still rise): it
 *    works and sleeps. A steady worker, however starved, is runnable all
 *    along: its demand does not fall that low (it would take a whole step
 *    spent on a run queue with no wait ending in it, and the step after);
 *  - the pauses are the steps (the pending one too: the threads that
 *    burst are sleepers) at which every bursting thread read there is
 *    asleep (and one is): a pool of workers that take turns has few;
 *  - floor_pct: the process's CPU in the pauses (their median) when there
 *    are FINEFLOOR_PAUSE_MIN, else the p10 of its CPU over the steps; a busy
 *    floor is one with pauses at or above the caller's threshold;
 *  - holders: the threads whose median CPU in the pauses is a real part of
 *    the floor (> 0 and >= a quarter of it), the most first: where the
 *    floor is spent.
 *
 * Memory: ~13 KiB a process read (FINEFLOOR_STEPS steps of DEMAND_THREADS
 * threads, a byte each of CPU and of demand); nothing allocated here.
 */
#ifndef STACKTOP_FINEFLOOR_H
#define STACKTOP_FINEFLOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/proc/demand.h"

/* Steps kept (~13 s of 0.2 s steps): the oldest falls out. */
#define FINEFLOOR_STEPS 64
/* A thread's step: busy at this demand or more, having run this much;
 * asleep under that demand. */
#define FINEFLOOR_BUSY_PCT 50
#define FINEFLOOR_BUSY_RUN_PCT 2
#define FINEFLOOR_ASLEEP_PCT 5
/* Asleep steps a bursting thread needs, and pauses a floor. */
#define FINEFLOOR_PAUSE_MIN 2
/* Threads named as holding a floor, at most. */
#define FINEFLOOR_HOLDERS 4
/* A thread's step value when it was not read at that step. */
#define FINEFLOOR_NONE 255

struct finefloor_thread {
	pid_t tid;
	uint64_t pend_run, pend_dem; /* the pending step's ns */
	/* % of one core at each step (its ring slots), FINEFLOOR_NONE: not read */
	uint8_t run[FINEFLOOR_STEPS], dem[FINEFLOOR_STEPS];
};

struct finefloor {
	struct demand d; /* the threads at the last read (finefloor_read) */
	size_t n;
	struct finefloor_thread th[DEMAND_THREADS]; /* at the newest step, sorted by tid */
	/* The steps: a ring of len from head; each one's end (t of the read),
	 * length (s) and the process's CPU (% of one core). */
	size_t len, head;
	double end[FINEFLOOR_STEPS], dur[FINEFLOOR_STEPS], cpu[FINEFLOOR_STEPS];
	uint64_t pend_ns; /* the newest step's length while it is pending, 0: none */
};

struct finefloor_verdict {
	double span_s; /* from the oldest step's start to the newest's end */
	size_t steps, pauses;
	double floor_pct; /* see above */
	size_t nholders;  /* the threads that hold it, the most first */
	pid_t holder[FINEFLOOR_HOLDERS];
	double holder_pct[FINEFLOOR_HOLDERS]; /* their median CPU in the pauses */
};

/* The step st (from demand_update) that ended at t (seconds, any origin,
 * increasing): gives back to the pending step, then keeps st pending.
 * Threads not in st leave the table (their steps with them). A
 * finefloor starts zeroed. */
void finefloor_step(struct finefloor *f, double t, const struct demand_step *st);

/* pid's threads read (demand_read under procfd; its task directory
 * listed each time, with buf), then finefloor_step at t. As demand_read's
 * return. */
int finefloor_read(int procfd, pid_t pid, struct finefloor *f, char *buf, size_t size, double t,
		   unsigned *files);

void finefloor_eval(const struct finefloor *f, struct finefloor_verdict *v);

#endif
