/*
 * wall — the wall-clock sampler: every thread of a target, running or
 * blocked, sampled through ptrace one thread at a time.
 *
 * Per thread: PTRACE_SEIZE (never ATTACH, never O_EXITKILL), and four fds
 * kept open on /proc/PID/task/TID/{stat,syscall,wchan,schedstat}. Per sample:
 * read those first (a ptrace stop changes them), then PTRACE_INTERRUPT,
 * waitpid(__WALL), PTRACE_GETREGSET, one process_vm_readv of the stack,
 * and PTRACE_CONT (PTRACE_LISTEN when the stop is a group-stop: the user
 * stopped the target and it stays stopped). A thread that has not run
 * since its last sample (schedstat run time unchanged) is not stopped: its
 * last registers and stack are delivered again. A thread in D state is not
 * stopped either (it could not trap until its wait ends): the user sp and
 * pc from its syscall file and a stack read while it sleeps stand in.
 *
 * Threads are added by the caller (rescan /proc/PID/task each refresh and
 * call wall_add_thread for new tids); exited ones are dropped on their own
 * (ESRCH, or their exit status seen by waitpid). Signals that arrive for a
 * tracee stop it in a signal-delivery-stop until we see it; wall_reap (also
 * run by every wall_tick) re-injects them at once: call it on SIGCHLD.
 *
 * Ownership: the sampler owns its threads' buffers; a delivered struct
 * sample points into them and is valid only during the callback. If the
 * tracer dies the kernel detaches and restarts every tracee (ptrace(2)),
 * except those in group-stop, which stay stopped as the user wanted.
 */
#ifndef STACKTOP_WALL_H
#define STACKTOP_WALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/sample/sample.h"

#define WALL_DEFAULT_RATE_HZ 19
#define WALL_DEFAULT_STACK_SIZE 16384u

struct wall_config {
	unsigned rate_hz;    /* samples per second per thread; 0: WALL_DEFAULT_RATE_HZ */
	unsigned stack_size; /* bytes copied from rsp up; 0: WALL_DEFAULT_STACK_SIZE */
};

struct wall_stats {
	uint64_t samples; /* delivered (fresh + reused) */
	uint64_t stops;	  /* ptrace stops taken */
	uint64_t reused;  /* delivered from the cache: the thread had not run */
	/* Held stopped: from the moment the stop is seen to the resume (the
	 * registers and stack copy), per stop. */
	uint64_t pause_ns_total, pause_ns_max;
	/* INTERRUPT → the stop seen: the thread must reach a trap first (be
	 * scheduled, if it waits for a CPU); it runs or sleeps meanwhile. */
	uint64_t reach_ns_total;
	uint64_t cpu_wait;	 /* sample weight given to CPU-wait */
	uint64_t failed;	 /* samples that could not be taken (timeouts, read errors) */
	uint64_t nostop;	 /* D-state samples taken without a stop */
	uint64_t signals;	 /* signals re-injected */
	uint64_t exited;	 /* threads that went away */
	uint64_t threads_failed; /* add_thread failures but gone or known threads */
};

struct wall_sampler;

int wall_new(const struct wall_config *c, struct wall_sampler **out);
/* Seize one thread. 0; -EEXIST already sampled; -EBUSY traced by another
 * process (wall_tracer_of names it); -EPERM not permitted; -ESRCH gone. */
int wall_add_thread(struct wall_sampler *ws, pid_t pid, pid_t tid);
bool wall_has_thread(const struct wall_sampler *ws, pid_t tid);
int wall_nthreads(const struct wall_sampler *ws);

/* Take the samples due at now_ns (CLOCK_MONOTONIC): each thread at most
 * rate_hz times a second, spread over the period. Each is delivered
 * through cb after the thread was resumed. A thread is sampled at most once
 * per call: called less often than 1/rate_hz, a sample's weight is the
 * number of periods it stands for (so shares stay wall time); call it at
 * least every period for the full time resolution. On-CPU samples (state R) are
 * SAMPLE_ONCPU with wait NONE; others SAMPLE_OFFCPU with their wait kind.
 * Returns the number of samples delivered. */
int wall_tick(struct wall_sampler *ws, uint64_t now_ns,
	      void (*cb)(void *ctx, const struct sample *s), void *ctx);
/* Handle pending stops without blocking: re-inject signals, LISTEN on
 * group-stops, drop exited threads. Returns how many stops were handled. */
int wall_reap(struct wall_sampler *ws);

/* Resume and detach every thread; threads in group-stop stay stopped.
 * 0, or -EAGAIN when some thread could not be stopped to detach it (a long
 * D state): the kernel detaches it when we exit. Safe to call twice. */
int wall_detach_all(struct wall_sampler *ws);
void wall_free(struct wall_sampler *ws); /* detaches first */
const struct wall_stats *wall_get_stats(const struct wall_sampler *ws);
/* "rate lowered to 4.2 Hz a thread to keep up", or NULL. */
const char *wall_note(const struct wall_sampler *ws);

/* The sampler interface (sampler.h) over a new wall sampler: wall mode. */
struct sampler;
int wall_sampler_new(const struct wall_config *c, struct sampler **out);
/* The sentence (with the fix) for a wall_add_thread error of pid. */
void wall_explain(int err, pid_t pid, char *buf, size_t size);

/* TracerPid of pid (0: not traced); -errno on error. */
int wall_tracer_of(pid_t pid);

/* Sample every thread once, now, whatever is due (dump). */
int wall_sample_all(struct wall_sampler *ws, uint64_t now_ns,
		    void (*cb)(void *ctx, const struct sample *s), void *ctx);

/* Sample thread tid once more, now (dump: a thread whose stop missed the
 * pass's deadline). 1 if delivered, 0 if not (still pending, gone, failed
 * again), -ESRCH if tid is not attached. Call wall_reap first. */
int wall_sample_thread(struct wall_sampler *ws, pid_t tid, uint64_t now_ns,
		       void (*cb)(void *ctx, const struct sample *s), void *ctx);

#endif
