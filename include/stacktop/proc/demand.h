/*
 * demand — how much CPU a process asks for, from the scheduler's own
 * accounting: each thread's /proc/PID/task/TID/schedstat holds the ns it
 * ran (field 1) and the ns it waited on a run queue (field 2); their sum
 * over an interval is the time the thread was runnable. A steady worker
 * starved by other load runs 30 % and waits 70 %: its demand stays at
 * 100 % a thread however starved, where its CPU wanders; a thread asleep
 * asks for nothing. machine reads it for the processes that may hold a
 * busy floor (machine.h).
 *
 *   demand_read (procfs) = list the threads + read each + demand_update
 *   demand_update (pure: the tests feed it)
 *
 * Between two reads of a process: a thread seen at both counts its
 * (run + wait) delta, at most the interval; a thread new since the last read counts from its
 * first read (nothing at it: not its whole life); a thread gone drops out.
 * The first read gives no point. At most DEMAND_THREADS threads a process,
 * the first its task directory lists; a process of one thread is its pid
 * (no listing).
 *
 * Cost of demand_read: one open + getdents of the task directory (more
 * than one thread), and one open + read + close of a ~30-byte file a
 * thread; nothing allocated (struct demand is the caller's, ~1.5 KiB).
 * The kernel adds the wait of a thread still queued at a read when it gets
 * the CPU: a point may miss one wait on a run queue (a few ms to some tens
 * of ms on a loaded box) that the next point would add; capped at the
 * interval a thread, the next does not rise above 100 % for it.
 * So a steady worker's points stay within a few points under 100 % a
 * thread, never by a sleep. The step gives each thread's raw deltas too
 * (proc/finefloor reads them at fine steps, where that wait is a larger
 * part of a step and is given back to the step it began in), and the
 * threads' CPU (field 1 alone, which has no such lag).
 */
#ifndef STACKTOP_DEMAND_H
#define STACKTOP_DEMAND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Threads of a process read, at most. */
#define DEMAND_THREADS 64

/* One thread's counters: ns it ran (schedstat field 1), ns it ran or
 * waited on a run queue (fields 1 + 2); at a read, or their deltas over a
 * step. */
struct demand_ns {
	pid_t tid;
	uint64_t run, dem;
};

struct demand {
	size_t n;			     /* threads at the last read */
	struct demand_ns th[DEMAND_THREADS]; /* sorted by tid */
	uint64_t at_ns;			     /* when (CLOCK_MONOTONIC), 0: never read */
};

/* What happened between two reads. */
struct demand_step {
	uint64_t dt_ns; /* the interval */
	double run_pct; /* the threads' CPU, % of one core */
	double pct;	/* their demand, each thread's at most the interval */
	size_t n;	/* threads at both reads */
	/* Their deltas, sorted by tid; dem as read (it may exceed the
	 * interval: a wait begun before the last read, added at its end). */
	struct demand_ns delta[DEMAND_THREADS];
};

/* The threads' counters r[0..n) (any order, n <= DEMAND_THREADS; more
 * are ignored) read at now_ns into d; *out: the step since the last
 * update. 1 when *out is set; 0 on a first update or when no time
 * passed. */
int demand_update(struct demand *d, uint64_t now_ns, const struct demand_ns *r, size_t n,
		  struct demand_step *out);

/* pid's threads read under procfd (an open /proc): its task directory
 * listed with buf (size bytes, a getdents64 buffer) unless nthreads <= 1,
 * each thread's schedstat, then demand_update at CLOCK_MONOTONIC's now.
 * *files counts the files opened. 1 / 0 as demand_update, -ESRCH when the
 * process is gone, -errno. */
int demand_read(int procfd, pid_t pid, int nthreads, struct demand *d, char *buf, size_t size,
		struct demand_step *out, unsigned *files);

/* One schedstat line ("run wait slices"): *run, and run + wait in *dem.
 * 0 / -EINVAL. */
int demand_parse(const char *text, uint64_t *run, uint64_t *dem);

#endif
