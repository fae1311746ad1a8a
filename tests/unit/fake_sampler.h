/*
 * fake_sampler.h — a struct sampler of the tests' own (as perfsource.c and wall.c
 * embed one), for the modules that drive a sampler: it keeps the threads it
 * is given, counts every call, and its collect delivers one sample per
 * thread to the sink. fake_sampler_init fills the full ops table, or only
 * the required ones (collect, free) with minimal = true. Include after
 * cmocka.h; static, so one copy per test binary.
 */
#ifndef STACKTOP_TEST_FAKE_SAMPLER_H
#define STACKTOP_TEST_FAKE_SAMPLER_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "stacktop/sample/sampler.h"

#define FAKE_MAX_THREADS 256

struct fake_sampler {
	struct sampler base; /* first, as every implementation */
	pid_t pid, tids[FAKE_MAX_THREADS];
	int n;
	int add_err; /* add_thread answers this instead of adding, when set */
	int adds, collects, stops, frees;
	int order; /* calls so far; stop_at and free_at: when each came */
	int stop_at, free_at;
};

static int fake_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	struct fake_sampler *f = (struct fake_sampler *)s;

	f->adds++;
	if (f->add_err)
		return f->add_err;
	for (int i = 0; i < f->n; i++)
		if (f->tids[i] == tid)
			return -EEXIST;
	if (f->n == FAKE_MAX_THREADS)
		return -ENOSPC;
	f->pid = pid;
	f->tids[f->n++] = tid;
	return 0;
}

static bool fake_has_thread(const struct sampler *s, pid_t tid)
{
	const struct fake_sampler *f = (const struct fake_sampler *)s;

	for (int i = 0; i < f->n; i++)
		if (f->tids[i] == tid)
			return true;
	return false;
}

static int fake_nthreads(const struct sampler *s)
{
	return ((const struct fake_sampler *)s)->n;
}

static int fake_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	struct fake_sampler *f = (struct fake_sampler *)s;

	f->collects++;
	for (int i = 0; i < f->n; i++) {
		struct sample smp = {
		    .pid = f->pid, .tid = f->tids[i], .time_ns = now_ns, .weight = 1};

		sink->sample(sink->ctx, &smp);
	}
	return f->n;
}

static void fake_stop(struct sampler *s)
{
	struct fake_sampler *f = (struct fake_sampler *)s;

	f->stops++;
	f->stop_at = ++f->order;
}

static void fake_free(struct sampler *s)
{
	struct fake_sampler *f = (struct fake_sampler *)s;

	f->frees++;
	f->free_at = ++f->order;
}

static const struct sampler_ops fake_ops = {
    .mode = "fake",
    .add_thread = fake_add_thread,
    .has_thread = fake_has_thread,
    .nthreads = fake_nthreads,
    .collect = fake_collect,
    .stop = fake_stop,
    .free = fake_free,
};

/* Only what every sampler must have: the wrappers answer for the rest. */
static const struct sampler_ops fake_ops_minimal = {
    .collect = fake_collect,
    .free = fake_free,
};

static inline void fake_sampler_init(struct fake_sampler *f, bool minimal)
{
	memset(f, 0, sizeof(*f));
	f->base.ops = minimal ? &fake_ops_minimal : &fake_ops;
}

#endif
