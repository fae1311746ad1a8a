/*
 * sampler — the one interface every source of samples implements:
 *
 *   perf   (perfsource.c over perf.c, cpu mode)  on-CPU samples from perf_event_open rings
 *   wall   (wall.c, wall mode)  every thread, running or blocked, via ptrace
 *   report (report.c)           a saved profile replayed as a source
 *
 * The session (app/session.c) picks one at start and from then on only calls these wrappers; no
 * mode flag is tested in the loop. A sampler hands what it collects to a
 * struct sampler_sink (in practice: ingest): samples, and the events that
 * make the process's mappings stale (exec, new code mapped). Thread
 * bookkeeping that a sampler learns itself (perf's FORK and EXIT records)
 * stays inside it: it adds and removes those threads after the drain.
 *
 * A delivered struct sample borrows the sampler's buffers: valid during the
 * callback only.
 *
 * Contract: *_sampler_new → sampler_add_thread* → (sampler_collect,
 * sampler_add_thread)* → sampler_stop → sampler_free. sampler_stop must
 * leave every target running as it was (wall: detach; perf: nothing to
 * undo); sampler_free calls it first if it was not called.
 */
#ifndef STACKTOP_SAMPLER_H
#define STACKTOP_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "stacktop/sample/sample.h"

struct sampler_sink {
	void (*sample)(void *ctx, const struct sample *s);
	/* pid exec'd, or mapped new executable code: its maps are stale. */
	void (*maps_changed)(void *ctx, pid_t pid);
	/* pid exec'd: its command line changed (comm is the new name). */
	void (*exec)(void *ctx, pid_t pid, const char *comm);
	void *ctx;
};

/* What the header shows of a sampler; counters since start. */
struct sampler_stats {
	uint64_t samples; /* delivered */
	uint64_t lost;	  /* records the kernel dropped */
	uint64_t throttled;
	uint64_t threads_failed;   /* threads that could not be sampled */
	int threads_failed_err;	   /* the last reason (-errno), 0 when none */
	double pause_us;	   /* wall: mean time a thread is stopped per sample; 0: n/a */
	bool kernel_denied;	   /* kernel callchains wanted but not permitted */
	bool misses_short_threads; /* per-task events: short threads go unsampled */
	/* Expected samples/s per thread at 100% of a core (perf) or per
	 * thread whatever it does (wall); 0: not applicable (report). */
	double rate_hz;
	bool per_thread_rate; /* wall: rate_hz applies to every thread */
	/* What the sampler cannot see, as a header field ("per-task events:
	 * threads under 10 ms undersampled"), or NULL. */
	const char *coverage_note;
	/* Processes the sampled threads forked (FORK records), when the
	 * sampler sees every one (forks_known): then a thread that forked
	 * nothing since the last look has no new child to read about. */
	uint64_t forks;
	bool forks_known;
};

struct sampler;

struct sampler_ops {
	const char *mode; /* "cpu", "wall", or NULL for a saved profile */
	/* Start sampling tid of process pid. 0, -EEXIST already sampled,
	 * -ESRCH gone, other -errno: see the sampler's own header. */
	int (*add_thread)(struct sampler *s, pid_t pid, pid_t tid);
	bool (*has_thread)(const struct sampler *s, pid_t tid);
	int (*nthreads)(const struct sampler *s);
	/* Deliver what is due at now_ns to the sink. Returns samples delivered. */
	int (*collect)(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink);
	/* A child of ours changed state (SIGCHLD); may be NULL. */
	void (*on_child)(struct sampler *s);
	/* A launched command: set up before it execs, told once it did; may
	 * be NULL (then its threads are added like any others). */
	int (*launch_prepare)(struct sampler *s, pid_t pid);
	void (*launch_done)(struct sampler *s);
	/* Take what the kernel buffers now, deliver it at the next collect:
	 * called from slow work between collects (lib/pump.h); may be NULL. */
	void (*pump)(struct sampler *s);
	/* Shortest useful collect interval in ns (0: no preference). */
	uint64_t (*tick_ns)(const struct sampler *s);
	void (*stats)(const struct sampler *s, struct sampler_stats *out);
	/* The sentence for an add_thread error of pid, with the fix. */
	void (*explain)(const struct sampler *s, int err, pid_t pid, char *buf, size_t size);
	void (*stop)(struct sampler *s);
	void (*free)(struct sampler *s);
};

/* Every implementation embeds this as its first member. */
struct sampler {
	const struct sampler_ops *ops;
	bool stopped;
	int last_err; /* the last add_thread failure but a gone or known thread */
};

const char *sampler_mode(const struct sampler *s);
/* Are so few descriptors left under RLIMIT_NOFILE that a thread's should
 * not be opened (sampler_add_thread then refuses with -EMFILE)? */
bool sampler_fds_low(void);
int sampler_add_thread(struct sampler *s, pid_t pid, pid_t tid);
bool sampler_has_thread(const struct sampler *s, pid_t tid);
int sampler_nthreads(const struct sampler *s);
int sampler_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink);
void sampler_on_child(struct sampler *s);
int sampler_launch_prepare(struct sampler *s, pid_t pid);
void sampler_launch_done(struct sampler *s);
void sampler_pump(struct sampler *s);
uint64_t sampler_tick_ns(const struct sampler *s);
void sampler_stats(const struct sampler *s, struct sampler_stats *out);
void sampler_explain(const struct sampler *s, int err, pid_t pid, char *buf, size_t size);
void sampler_stop(struct sampler *s);
void sampler_free(struct sampler *s); /* NULL is fine; stops first */

#endif
