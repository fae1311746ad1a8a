/*
 * waits — what an off-CPU thread waits in, from what procfs says about it.
 *
 * Pure functions: a state letter (field 3 of /proc/PID/task/TID/stat), the
 * syscall number (first field of .../syscall, -1 when "running" or unknown)
 * and the wchan text → enum sample_wait; and names for wait kinds and x86-64
 * syscall numbers (for "other"). No I/O, no allocation.
 */
#ifndef STACKTOP_WAITS_H
#define STACKTOP_WAITS_H

#include <stddef.h>

#include <stdbool.h>

#include "stacktop/proc/funckind.h"

/* For off-CPU (wall-clock) samples: what the thread waits in, from its
 * state, syscall and wchan read before it was stopped. */
enum sample_wait {
	SAMPLE_WAIT_NONE = 0, /* running on a CPU */
	SAMPLE_WAIT_LOCK,     /* contention: a mutex, rwlock or file lock held by another */
	SAMPLE_WAIT_IO,	      /* read, write, poll, recv, send, accept, fsync, ... */
	SAMPLE_WAIT_SLEEP,    /* nanosleep, clock_nanosleep, pause */
	SAMPLE_WAIT_DSTATE,   /* uninterruptible (D), wchan tells where */
	SAMPLE_WAIT_OTHER,    /* some other syscall (named in syscall_nr) */
	/* Waiting for work, not for a resource: a condition variable, a
	 * semaphore, pthread_join, epoll_wait, an event loop's poll. */
	SAMPLE_WAIT_IDLE,
	/* Runnable but not running: in the run queue, waiting for a CPU
	 * (from schedstat's run delay). */
	SAMPLE_WAIT_CPU,
	/* Waiting to take CPython's GIL (said by ingest from the stack of a
	 * CPython process: runtime/python). */
	SAMPLE_WAIT_GIL,
	SAMPLE_WAIT_COUNT
};

/* Classify: D → DSTATE whatever the syscall; R (or no syscall) → NONE;
 * futex → LOCK (until the stack says otherwise: waits_by_function);
 * epoll_wait → IDLE; read/write/poll/recv/send/accept/connect/fsync... →
 * IO; nanosleep/clock_nanosleep/pause → SLEEP; any other syscall → OTHER.
 * wchan may be NULL; it only helps when the syscall is unknown (a futex
 * there is LOCK, any other wchan its funckind_of kind). (CPU, a
 * runnable thread waiting for a CPU, comes from schedstat, not from here.) */
enum sample_wait waits_classify(char state, int syscall_nr, const char *wchan);

/* What a function on the stack of a thread classed kind (in syscall_nr)
 * says about its wait: LOCK for mutex and rwlock code, IDLE for condition
 * variables, semaphores, joins and event loops (funckind_of's LOCK and
 * IDLE); NONE when it says nothing.
 * Asked leaf first; the first answer other than NONE wins. Only LOCK and
 * OTHER (a futex), and IO in poll/select, are refined. */
enum sample_wait waits_by_function(enum sample_wait kind, int syscall_nr, const char *func);

/* The wait a function kind names: LOCK, IDLE, IO and SLEEP their own; any
 * other kind (GC, runtime, syscall, none) NONE: it says nothing about a
 * wait. */
enum sample_wait waits_of_funckind(enum funckind k);

/* "running", "lock", "I/O", "sleep", "D-state", "other", "idle",
 * "CPU-wait". */
const char *waits_name(enum sample_wait w);
/* Pseudo-frame names: "[running]", "[lock]", "[I/O]", "[sleep]",
 * "[D-state]", "[other]", "[idle]", "[CPU-wait]". */
const char *waits_frame_name(enum sample_wait w);

/* true when a wchan names only the way into or out of the kernel
 * ("do_syscall_64", "restart_syscall", "ptrace_stop"): what a sleeping
 * thread shows for a moment after a stop (wall mode's own included), not
 * what it sleeps in. */
bool waits_wchan_generic(const char *wchan);

/* Name of an x86-64 syscall number ("futex", "epoll_wait"), or NULL when
 * not in the table. */
const char *waits_syscall_name(int nr);

/* Parse the text of /proc/PID/task/TID/syscall: "running" → -1 with sp and
 * pc 0; "-1 sp pc" (blocked, not in a syscall) → -1; "nr a1..a6 sp pc" →
 * nr. sp/pc may be NULL. 0 or -EINVAL. */
int waits_parse_syscall(const char *text, int *nr, unsigned long long *sp, unsigned long long *pc);

/* (The state letter of a stat line: target_parse_stat_state.) */

/* Run time (first field, ns) from .../schedstat text. 0 or -EINVAL. */
int waits_parse_schedstat(const char *text, unsigned long long *run_ns);
/* Run time and run-queue delay (second field: time runnable but waiting
 * for a CPU, ns) from .../schedstat text. 0 or -EINVAL. */
int waits_parse_schedstat2(const char *text, unsigned long long *run_ns,
			   unsigned long long *delay_ns);

#endif
