/*
 * perfsource — perf as a sampler (see perfsource.h for the contract): the
 * perf callbacks turned into the sink's, and the per-thread mode's queue
 * of threads announced during a drain.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/sample/perf.h"
#include "stacktop/sample/perfsource.h"
#include "stacktop/sample/sampler.h"

struct perfsource {
	struct sampler base;
	struct perf_sampler *ps;
	/* Where collect delivers, and (per-thread mode) the threads FORK
	 * and EXIT records announced, applied after the drain. */
	const struct sampler_sink *sink;
	pid_t (*pending_new)[2];
	size_t npending_new, pending_new_cap;
	pid_t *pending_exit;
	size_t npending_exit, pending_exit_cap;
};

static struct perfsource *perfsource_of(const struct sampler *s)
{
	return (struct perfsource *)s;
}

static bool perfsource_per_thread(const struct perfsource *src)
{
	return perf_get_stats(src->ps)->events == PERF_EVENTS_THREAD;
}

static void perfsource_sample(void *ctx, const struct sample *s)
{
	const struct sampler_sink *sink = ((struct perfsource *)ctx)->sink;
	sink->sample(sink->ctx, s);
}

static void perfsource_thread_new(void *ctx, pid_t pid, pid_t tid)
{
	struct perfsource *src = ctx;
	if (perfsource_per_thread(src) && perf_has_process(src->ps, pid) &&
	    !array_grow((void **)&src->pending_new, &src->pending_new_cap, src->npending_new + 1,
			sizeof(*src->pending_new))) {
		src->pending_new[src->npending_new][0] = pid;
		src->pending_new[src->npending_new][1] = tid;
		src->npending_new++;
	}
}

static void perfsource_thread_exit(void *ctx, pid_t pid, pid_t tid)
{
	struct perfsource *src = ctx;
	if (perfsource_per_thread(src) &&
	    !array_grow((void **)&src->pending_exit, &src->pending_exit_cap, src->npending_exit + 1,
			sizeof(*src->pending_exit)))
		src->pending_exit[src->npending_exit++] = tid;
}

static void perfsource_exec(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	const struct sampler_sink *sink = ((struct perfsource *)ctx)->sink;
	if (sink->maps_changed)
		sink->maps_changed(sink->ctx, pid);
	if (sink->exec)
		sink->exec(sink->ctx, pid, comm);
}

static void perfsource_mmap(void *ctx, pid_t pid, pid_t tid)
{
	const struct sampler_sink *sink = ((struct perfsource *)ctx)->sink;
	if (sink->maps_changed)
		sink->maps_changed(sink->ctx, pid);
}

static const struct perf_callbacks perfsource_callbacks = {
    .sample = perfsource_sample,
    .thread_new = perfsource_thread_new,
    .thread_exit = perfsource_thread_exit,
    .exec = perfsource_exec,
    .mmap = perfsource_mmap,
};

/* perf opens threads inside its own calls too (a pending thread at a
 * drain, the per-CPU filter at the first add): what failed there is the
 * sampler's last failure. failed: perf's count of failures before the call. */
static void perfsource_note_failed(struct perfsource *src, uint64_t failed)
{
	const struct perf_stats *st = perf_get_stats(src->ps);
	if (st->threads_failed != failed && st->last_err)
		src->base.last_err = st->last_err;
}

static int perfsource_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	struct perfsource *src = perfsource_of(s);
	uint64_t failed = perf_get_stats(src->ps)->threads_failed;
	int err = perf_add_thread(src->ps, pid, tid);
	perfsource_note_failed(src, failed);
	return err;
}

static bool perfsource_has_thread(const struct sampler *s, pid_t tid)
{
	return perf_has_thread(perfsource_of(s)->ps, tid);
}

static int perfsource_nthreads(const struct sampler *s)
{
	return perf_nthreads(perfsource_of(s)->ps);
}

static int perfsource_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	struct perfsource *src = perfsource_of(s);
	uint64_t failed = perf_get_stats(src->ps)->threads_failed;
	src->sink = sink;
	int n = perf_drain(src->ps, &perfsource_callbacks, src);
	src->sink = NULL;
	perfsource_note_failed(src, failed);
	for (size_t i = 0; i < src->npending_exit; i++)
		perf_remove_thread(src->ps, src->pending_exit[i]);
	src->npending_exit = 0;
	for (size_t i = 0; i < src->npending_new; i++)
		sampler_add_thread(s, src->pending_new[i][0], src->pending_new[i][1]);
	src->npending_new = 0;
	return n;
}

static int perfsource_launch_prepare(struct sampler *s, pid_t pid)
{
	return perfsource_add_thread(s, pid, pid);
}

static void perfsource_launch_done(struct sampler *s)
{
	perf_exec_done(perfsource_of(s)->ps);
}

static void perfsource_pump(struct sampler *s)
{
	perf_pump(perfsource_of(s)->ps);
}

static uint64_t perfsource_tick_ns(const struct sampler *s)
{
	return (uint64_t)(perf_get_config(perfsource_of(s)->ps)->drain_interval_s * 1e9);
}

static void perfsource_stats(const struct sampler *s, struct sampler_stats *out)
{
	const struct perf_sampler *ps = perfsource_of(s)->ps;
	const struct perf_stats *st = perf_get_stats(ps);
	out->samples = st->samples;
	out->lost = st->lost;
	out->throttled = st->throttled;
	out->threads_failed = st->threads_failed;
	out->kernel_denied = !perf_kernel_enabled(ps);
	out->rate_hz = perf_get_config(ps)->rate_hz;
	/* Per-task events start each new thread a full period late. */
	out->misses_short_threads =
	    st->events == PERF_EVENTS_INHERIT || st->events == PERF_EVENTS_THREAD;
	/* Per-CPU and inherited events see their threads' forks; per-thread
	 * events are not sure to. */
	out->forks = st->forks;
	out->forks_known = st->events != PERF_EVENTS_THREAD;
	if (st->events == PERF_EVENTS_INHERIT)
		out->coverage_note = "per-task events: threads under 10 ms undersampled";
	else if (st->events == PERF_EVENTS_THREAD)
		out->coverage_note = "per-thread events: new threads seen up to 1 s late";
}

static void perfsource_explain(const struct sampler *s, int err, pid_t pid, char *buf, size_t size)
{
	const struct perf_sampler *ps = perfsource_of(s)->ps;
	if (perf_get_config(ps)->events == PERF_EVENTS_CPU &&
	    perf_get_stats(ps)->events != PERF_EVENTS_CPU)
		snprintf(buf, size,
			 "per-CPU events were refused (%s): they need root, or CAP_PERFMON and "
			 "CAP_BPF; leave out --events per-cpu to sample per task instead.",
			 strerror(-err));
	else
		perf_explain(err, pid, buf, size);
}

static void perfsource_free(struct sampler *s)
{
	struct perfsource *src = perfsource_of(s);
	perf_free(src->ps);
	ARRAY_FREE_ALL(src->pending_new, src->pending_exit, src);
}

static const struct sampler_ops perfsource_ops = {
    .mode = "cpu",
    .add_thread = perfsource_add_thread,
    .has_thread = perfsource_has_thread,
    .nthreads = perfsource_nthreads,
    .collect = perfsource_collect,
    .launch_prepare = perfsource_launch_prepare,
    .launch_done = perfsource_launch_done,
    .pump = perfsource_pump,
    .tick_ns = perfsource_tick_ns,
    .stats = perfsource_stats,
    .explain = perfsource_explain,
    .free = perfsource_free,
};

int perfsource_new(const struct perf_config *cfg, struct sampler **out)
{
	struct perfsource *src = calloc(1, sizeof(*src));
	if (!src)
		return -ENOMEM;
	int err = perf_new(cfg, &src->ps);
	if (err) {
		free(src);
		return err;
	}
	src->base.ops = &perfsource_ops;
	*out = &src->base;
	return 0;
}
