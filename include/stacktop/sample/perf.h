/*
 * perf — the on-CPU sampler: perf_event_open cpu-clock events sampling user
 * registers, a copy of the user stack and the kernel callchain.
 *
 * Default (per-CPU mode, when the kernel allows CPU-wide events and BPF):
 * one cpu-clock event per online CPU for everything that runs there, and a
 * BPF filter (pidfilter.h) that drops every sample but those of the target
 * processes before it is written. Its clock runs per CPU, so a thread that
 * lives 1 ms is sampled in proportion to its CPU time; threads and child
 * processes need no events of their own (fds: one per CPU).
 *
 * Inherit mode (the fallback): a thread added gets one event per online CPU with
 * inherit=1, so the threads and processes it creates later are sampled
 * from their first instruction; each CPU's events write into one mmap ring
 * (PERF_EVENT_IOC_SET_OUTPUT). Threads announced by FORK records are known
 * (perf_has_thread) without events of their own: adding one is -EEXIST.
 * Per-thread mode (config, or the fallback when per-CPU inherited events
 * are refused): one event per thread, cpu -1, its own ring. See perf.c.
 *
 * perf_drain reads every ring and hands decoded records to callbacks:
 * samples (a struct sample borrowing the ring's memory, valid during the
 * callback only), then, after the rings, new threads (PERF_RECORD_FORK) and
 * thread exits in time order, exec (COMM with PERF_RECORD_MISC_COMM_EXEC)
 * and new mappings (MMAP2). Lost records are counted, never fatal.
 *
 * Kernel callchains need exclude_kernel=0, which an unprivileged user at
 * perf_event_paranoid >= 2 may not have: the first EACCES falls back to
 * user-only sampling for every thread, and perf_kernel_enabled says so.
 * Times are CLOCK_MONOTONIC (use_clockid) so they line up with the window.
 *
 * The events are set up through perfevent.h (attributes, opening, rings,
 * the online CPUs) and their records decoded by perfrecord.h; this module
 * is the sampler: the modes, the thread table, and what each record does.
 */
#ifndef STACKTOP_PERF_H
#define STACKTOP_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/sample/sample.h"

/* Which events sample the target (perf_config.events). */
enum perf_events {
	PERF_EVENTS_AUTO,    /* per-CPU filtered, else inherit, else per thread */
	PERF_EVENTS_CPU,     /* one CPU-wide event per CPU, samples kept by pid (pidfilter) */
	PERF_EVENTS_INHERIT, /* inherited per-thread events, one ring per CPU */
	PERF_EVENTS_THREAD,  /* one event and ring per thread, no inherit */
};

struct perf_config {
	unsigned rate_hz;	 /* samples per second per thread of CPU time */
	unsigned stack_size;	 /* user stack bytes copied per sample */
	double drain_interval_s; /* how often the caller drains; sizes the rings */
	bool enable_on_exec;	 /* events start disabled, enable at the next exec */
	enum perf_events events;
	/* The whole machine: per-CPU events without a filter, opened by
	 * perf_new (its error when refused); no threads are added, no thread
	 * table is kept; every process's samples and side-band records come. */
	bool all;
};

struct perf_stats {
	uint64_t samples;   /* sample records received */
	uint64_t lost;	    /* records the kernel dropped (PERF_RECORD_LOST) */
	uint64_t throttled; /* PERF_RECORD_THROTTLE */
	uint64_t corrupt;   /* ring batches dropped as unparseable */
	uint64_t threads_opened, threads_failed;
	int last_err;		    /* why the last thread failed to open (-errno), 0 if none */
	uint64_t threads_inherited; /* threads announced by FORK, sampled by inheritance */
	enum perf_events events;    /* in use: CPU, INHERIT or THREAD */
	int fallback_err;	    /* why a more precise kind was refused (-errno), 0 if not */
	int filtered_pids;	    /* CPU mode: processes the filter keeps */
	uint64_t backlog_peak;	    /* most bytes read out of the rings, not yet named */
	uint64_t forks;		    /* FORK records of a new process (pid == tid) */
};

struct perf_callbacks {
	void (*sample)(void *ctx, const struct sample *s);
	void (*thread_new)(void *ctx, pid_t pid, pid_t tid);
	void (*thread_exit)(void *ctx, pid_t pid, pid_t tid);
	void (*exec)(void *ctx, pid_t pid, pid_t tid, const char *comm);
	void (*mmap)(void *ctx, pid_t pid, pid_t tid);
};

struct perf_sampler;

int perf_new(const struct perf_config *cfg, struct perf_sampler **out);
void perf_free(struct perf_sampler *ps);

/* Start sampling thread tid of process pid. 0, -EEXIST if already sampled
 * (its own events, or inherited ones), -ESRCH (gone), -EACCES/-EPERM (not
 * permitted), -EMFILE, -ENOMEM (ring could not be mapped: locked-memory
 * limit). Inherit mode: a thread that may have been created under our
 * events and whose FORK record is not read yet is known at once and
 * decided at a later drain (opened then if no FORK record came). */
int perf_add_thread(struct perf_sampler *ps, pid_t pid, pid_t tid);
void perf_remove_thread(struct perf_sampler *ps, pid_t tid);
bool perf_has_thread(const struct perf_sampler *ps, pid_t tid);
int perf_nthreads(const struct perf_sampler *ps);
/* Mapped rings: one per CPU in use (inherit mode), one per thread else. */
int perf_nrings(const struct perf_sampler *ps);

/* Read all rings, calling cb for each record. Every ring is emptied into
 * a backlog in memory first (sample/backlog.h), then the records are
 * handed out; the rings are read again every few ms meanwhile, and what
 * that brings is handed out by the next drain. Returns the number of
 * samples delivered. Callbacks must not add or remove threads (the thread
 * table is being walked): queue those and apply them after the drain.
 * Inherit mode keeps its own table here: FORK and EXIT records are applied
 * before thread_new and thread_exit are called. */
int perf_drain(struct perf_sampler *ps, const struct perf_callbacks *cb, void *ctx);

/* Empty the rings into the backlog now, handing nothing out: for slow
 * work between drains (or inside a callback: the record being handed out
 * stays valid), so the kernel does not drop samples meanwhile. */
void perf_pump(struct perf_sampler *ps);

const struct perf_stats *perf_get_stats(const struct perf_sampler *ps);
/* The configuration in use: perf_new's, its defaults filled in. */
const struct perf_config *perf_get_config(const struct perf_sampler *ps);
/* Whether a thread of process pid holds events (or is pending or covered). */
bool perf_has_process(const struct perf_sampler *ps, pid_t pid);
bool perf_kernel_enabled(const struct perf_sampler *ps);
/* The launched command has exec'd: threads opened from now on start enabled. */
void perf_exec_done(struct perf_sampler *ps);

/* Data pages of one ring (a power of two): a second of samples at rate_hz
 * with stack_size stack copies, within a memory bound over ncpus rings
 * (ncpus 0: a ring per thread, a fifth of a second in 4 MiB at most). */
unsigned perf_ring_pages(unsigned rate_hz, unsigned stack_size, int ncpus);

/* The sentence (with the fix) for a perf_add_thread error of pid. */
void perf_explain(int err, pid_t pid, char *buf, size_t size);

/* Drain a ring that is no thread's (a test's or a fuzzer's fake ring)
 * through the same record handling as perf_drain; kernel: samples carry a
 * kernel callchain. stats is added to. Returns the samples delivered. */
struct ring;
int perf_drain_ring(struct ring *r, bool kernel, const struct perf_callbacks *cb, void *ctx,
		    struct perf_stats *stats);

#endif
