/*
 * status — counters from every stage into the header (see status.h).
 */
#include "stacktop/app/status.h"

#include "stacktop/proc/target.h"

#include <string.h>

/* CPU samples in the window before a GC share is given: below, one sample
 * is several percent. */
#define STATUS_GC_MIN_SAMPLES 20

/* Samples/s the sampler should deliver: cpu-clock fires per CPU-second of
 * each thread (rate x cores busy); the wall sampler takes every thread at
 * the rate. 0 when unknown or over. */
static double expected_hz(const struct status_in *in)
{
	if (in->procs->exited || in->sampler.rate_hz <= 0)
		return 0;
	if (in->sampler.per_thread_rate)
		return in->sampler.rate_hz * in->sampled_threads;
	return in->cpu_now >= 0 ? in->sampler.rate_hz * in->cpu_now / 100.0 : 0;
}

/* The GC share of the CPU samples, once there are enough of them to tell
 * a few percent (else -1: not shown). */
static double status_gc_pct(uint64_t gc, uint64_t running)
{
	if (running < STATUS_GC_MIN_SAMPLES)
		return -1;
	return 100.0 * (double)gc / (double)running;
}

void status_header(const struct status_in *in, int *pids, struct view_header *h)
{
	const struct procs *ps = in->procs;
	memset(h, 0, sizeof(*h));
	for (int i = 0; i < ps->n; i++)
		pids[i] = ps->p[i].pid;
	h->pid = pids[0];
	h->npids = ps->n;
	h->pids = pids;
	h->cmdline = ps->p[0].cmdline;
	h->mode = in->mode;
	h->nthreads = ps->nthreads;
	h->rate_hz = in->rate_hz;
	h->expected_hz = expected_hz(in);
	h->pause_us = in->sampler.pause_us;
	h->samples_window = in->window_samples;
	h->samples_total = in->source ? in->source_samples : in->ingest->samples;
	h->source = in->source;
	h->lost = in->sampler.lost;
	h->unwind_truncated = in->ingest->truncated;
	h->unwind_failed = in->ingest->failed;
	h->unwind_cache_stopped = in->ingest->cache_stopped;
	h->unwind_finished = in->ingest->finished;
	h->python = in->ingest->python;
	h->python_unmatched = in->ingest->python_unmatched;
	h->python_torn = in->ingest->python_torn;
	if (in->dbg) {
		h->dbg_on = true;
		h->dbg_pending = in->dbg->pending;
		h->dbg_found = in->dbg->found;
		h->dbg_missing = in->dbg->missing;
	}
	h->window_s = in->window_s;
	h->span_s = in->span_s;
	h->threads_unsampled = ps->unsampled;
	h->files_refused = in->files_refused;
	h->unsampled_err = ps->unsampled_err;
	h->following = ps->follow;
	h->nchildren = ps->nkids;
	h->children_unfollowed = ps->unfollowed;
	h->children_max = PROCS_CHILDREN_MAX;
	h->exited = ps->exited;
	h->coverage_note = in->sampler.coverage_note;
	h->jit_nomap_pid = in->source ? 0 : in->jit_nomap_pid;
	h->gc_pct = status_gc_pct(in->gc_samples, in->gc_running);
	h->children_busy = !ps->follow && ps->kids_busy;
	h->exit_text = ps->exited ? ps->exit_text : NULL;
	if (in->health) {
		h->achieved_hz = in->health->achieved_hz;
		h->warning = in->health->warning;
		h->warn_hz = in->health->achieved_hz;
		h->warn_expected_hz = in->health->expected_hz;
		h->warn_cause = in->health->cause;
		h->warn_lost = in->health->lost_recent;
		h->warn_span_s = in->health->span_s;
		h->warn_tracer = in->health->tracer;
		h->warn_tracer_comm[0] = '\0';
		if (h->warning == VIEW_WARNING_TRACED && h->warn_tracer > 0)
			target_comm(h->warn_tracer, 0, h->warn_tracer_comm,
				    sizeof(h->warn_tracer_comm));
	}
}
