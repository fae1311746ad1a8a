/*
 * session — one profiling run, put together: the sampler of the mode (perf,
 * wall, or a saved profile), the stages a sample flows through (ingest →
 * frames → window, with sym behind frames), the processes being profiled,
 * and what is measured alongside (metrics from procfs once a second,
 * health: is stacktop keeping up).
 *
 *   session_open_live / session_open_report
 *   (session_collect on every tick; session_refresh + session_header on
 *    every refresh)*
 *   session_stop (targets left running as they were) → session_close
 *
 * The source decides some options: session_open_* write back o->rate_hz
 * (wall mode's default rate; a saved profile's period) and o->wall (a saved
 * wall profile). Errors: -errno with one sentence in err.
 */
#ifndef STACKTOP_SESSION_H
#define STACKTOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/formats/export.h"
#include "stacktop/model/summary.h"
#include "stacktop/model/spikes.h"
#include "stacktop/app/health.h"
#include "stacktop/app/jitwatch.h"
#include "stacktop/proc/locks.h"
#include "stacktop/memory/memmap.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/app/procs.h"
#include "stacktop/sample/sampler.h"

struct goheap;
struct ingest;
struct memtrace;
struct opts;
struct stackset;
struct sym;
struct frames;
struct window;
struct view_header;

struct session {
	struct procs procs;
	/* The pipeline, in the order a sample flows. */
	struct sampler *smp;
	struct sampler_sink sink; /* into ingest */
	struct ingest *in;
	struct sym *sy;
	struct frames *fr;
	struct window *w;
	struct stackset *report; /* report FILE: the profile replayed */
	struct dbgfetch *fetch;	 /* --debuginfod, else NULL */
	uint64_t tick_most_ns;	 /* the longest tick (session_tick_ns) */
	/* Alongside. */
	struct metrics metrics; /* every process profiled, summed */
	bool metrics_ok;
	/* runtime/hsperf or runtime/goheap: the first target's JVM or Go
	 * heap, read every second while found, else looked for again (every
	 * second for 20 misses, then every 10 s) */
	uint64_t hsperf_next_ns;
	unsigned hsperf_misses;
	/* runtime/goheap: the first target's Go heap (NULL: not Go, or not
	 * readable: goheap_rc says why) for goheap_pid */
	struct goheap *goheap;
	pid_t goheap_pid;
	int goheap_rc;
	struct spikes *spikes; /* the seconds that matter, what rises in spikes */
	/* Who waits on whose lock, read with each metrics tick (threads asleep
	 * in futex): the threads view and dump name holders and deadlocks. */
	struct locks locks;
	uint64_t next_metrics_ns;
	uint64_t metrics_open_ns; /* the first metrics tick (start-up) */
	struct health health;
	/* JIT code without names: its runtime, a JVM asked for its map. */
	struct jitwatch jit;
	/* Memory attribution (issue 14), started by session_memory_start:
	 * the growing mappings (smaps) and the code paths holding them. */
	bool memory_on;
	struct memmap memmap;
	struct memtrace *memtrace; /* NULL: not started, or refused (memtrace_err) */
	char memtrace_err[256];
	uint64_t memory_since_ns;
	uint64_t execs_seen; /* ingest's exec count when command lines were read */
	/* The whole machine (-a): every process (proc/machine, ticked with
	 * the metrics), the process the views are narrowed to (0: none,
	 * session_narrow), and the box's CPU and memory a second, which the
	 * metrics show while not narrowed (NULL machine: one target). */
	struct machine *machine;
	pid_t narrow;
	struct series box_cpu, box_mem;
	const struct opts *o;
	double period_s; /* seconds one sample stands for */
	/* The run so far, from the metrics' ticks (record's summary). */
	struct {
		bool started;
		double cpu_s, peak_cpu; /* CPU seconds, % of a core */
		double t_last;		/* the metrics tick cpu_s counts up to */
		uint64_t peak_rss;
	} run;
};

/* The per-second CPU of the run's last max seconds at most (metrics'
 * cpu_long), oldest first, into v, and the newest point's time into
 * *t_last (seconds of CLOCK_MONOTONIC): how many (0 without metrics). */
size_t session_cpu(const struct session *s, double *v, size_t max, double *t_last);
/* A live target: -p PIDs, or o->command launched; or, with o->all, the
 * whole machine (refused without root or CAP_PERFMON, in one sentence). */
int session_open_live(struct session *s, struct opts *o, char *err, size_t errsz);
/* o->report_file: every sample delivered at once; time stands still. */
int session_open_report(struct session *s, struct opts *o, char *err, size_t errsz);

/* Whether a view on screen shows the threads' wait channels (the threads
 * view): the metrics read them only then. */
void session_want_wchan(struct session *s, bool on);
/* The tick (ns): what the sampler wants, at most 50 ms (100 ms for
 * perf at 250 Hz and below; 50 ms again once the memory view traces); it
 * may change after a draw. */
uint64_t session_tick_ns(const struct session *s);
/* Every tick: take what the sampler has; once a second, the metrics. */
void session_collect(struct session *s, uint64_t now_ns);
/* Every refresh: new threads, exits and execs; age the window; measure.
 * first: the first scheduled refresh (start-up notes are shown). */
void session_refresh(struct session *s, uint64_t now_ns, bool first);
/* The header's counters at now (a saved profile's own clock). */
void session_header(struct session *s, struct view_header *h);
/* The clock of the data: now, or the end of a loaded profile. */
uint64_t session_now(const struct session *s);
/* Samples delivered, records lost (record's progress line). */
void session_counts(const struct session *s, uint64_t *samples, uint64_t *lost);

/* The run's figures over wall_s seconds: CPU seconds, average and peak CPU
 * and peak RSS of every process profiled, summed (zeros without metrics). */
void session_summary(const struct session *s, double wall_s, struct summary *out);
/* The whole machine: narrow the metrics (threads, charts, alerts, the
 * runtime heap, memory attribution) to process pid, or back to the box
 * (0). The metrics start from the history the process table kept of it
 * (its CPU and RSS a second). No-op when not the whole machine. */
void session_narrow(struct session *s, pid_t pid);
/* The process the metrics are about: the first target, the narrowed
 * process, or 0 (the whole machine, not narrowed). */
pid_t session_pid(const struct session *s);
/* Start reading smaps and tracing mmap/brk of the first target (the
 * memory view was opened, or memory climbs like stairs). Once; a refusal
 * is kept in memtrace_err for the view. Not for a saved profile. */
void session_memory_start(struct session *s);

/* Leave every target as it was (detach), stop a launched command. */
void session_stop(struct session *s);
void session_close(struct session *s);

#endif
