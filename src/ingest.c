/*
 * ingest — a sample becomes a stack of frame ids in the window (see
 * ingest.h for the contract).
 *
 * Processes are few (at most OPTS_MAX_PIDS in practice), so they sit in a
 * small array searched linearly; the cost per sample is the unwind.
 */
#include "stacktop/ingest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stacktop/frames.h"
#include "stacktop/space.h"
#include "stacktop/window.h"

#define INGEST_MAX_PROCS 64
#define RELOAD_EVERY_NS 100000000ull

struct ingest_proc {
	pid_t pid;
	struct space space;
	struct unwind *uw;
	bool loaded; /* space loaded at least once */
	bool stale;  /* mappings changed: reload before the next unwind */
	uint64_t loaded_ns;
};

struct ingest {
	struct frames *fr;
	struct window *w;
	struct ingest_proc procs[INGEST_MAX_PROCS];
	int nprocs;
	struct ingest_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ingest_new(struct frames *fr, struct window *w, struct ingest **out)
{
	struct ingest *in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->fr = fr;
	in->w = w;
	*out = in;
	return 0;
}

void ingest_free(struct ingest *in)
{
	if (!in)
		return;
	for (int i = 0; i < in->nprocs; i++) {
		unwind_free(in->procs[i].uw);
		space_release(&in->procs[i].space);
	}
	free(in);
}

static struct ingest_proc *ingest_proc(struct ingest *in, pid_t pid)
{
	for (int i = 0; i < in->nprocs; i++)
		if (in->procs[i].pid == pid)
			return &in->procs[i];
	return NULL;
}

/* (Re)load a process's mappings; a stale one at most every 100 ms, so a
 * target that maps code in a loop cannot make us reread its maps per sample. */
static void proc_reload(struct ingest_proc *p, bool force)
{
	uint64_t now = mono_ns();
	if (p->loaded && !force && now - p->loaded_ns < RELOAD_EVERY_NS)
		return;
	if (space_load(&p->space, p->pid) == 0) {
		p->loaded = true;
		p->stale = false;
	}
	p->loaded_ns = now;
	if (!p->uw)
		unwind_new(&p->space, &p->uw);
}

int ingest_add_process(struct ingest *in, pid_t pid)
{
	if (ingest_proc(in, pid))
		return -EEXIST;
	if (in->nprocs == INGEST_MAX_PROCS)
		return -ENOSPC;
	struct ingest_proc *p = &in->procs[in->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	proc_reload(p, true);
	return 0;
}

void ingest_maps_changed(struct ingest *in, pid_t pid)
{
	struct ingest_proc *p = ingest_proc(in, pid);
	if (p)
		p->stale = true;
}

/* The user pcs of s, leaf first: unwound from its registers and stack copy,
 * or as the sampler gave them. */
static int user_pcs(struct ingest *in, struct ingest_proc *p, const struct sample *s, uint64_t *pcs)
{
	if (s->nupcs > 0) {
		int n = s->nupcs < UNWIND_MAX_FRAMES ? s->nupcs : UNWIND_MAX_FRAMES;
		memcpy(pcs, s->upcs, (size_t)n * sizeof(*pcs));
		return n;
	}
	if (!s->regs_mask || !p->uw)
		return 0;
	int n = 0;
	unsigned flags = 0;
	unwind_sample(p->uw, s, pcs, UNWIND_MAX_FRAMES, &n, &flags);
	if (flags & UNWIND_TRUNCATED)
		in->st.truncated++;
	if (flags & UNWIND_FAILED)
		in->st.failed++;
	/* A pc outside every known mapping: new code was mapped. */
	if (flags & UNWIND_UNMAPPED)
		p->stale = true;
	return n;
}

static void push(uint32_t *frames, int max, int *n, int64_t id)
{
	if (id >= 0 && *n < max)
		frames[(*n)++] = (uint32_t)id;
}

int ingest_stack(struct ingest *in, const struct sample *s, uint32_t *frames, int max, int *n)
{
	uint64_t upcs[UNWIND_MAX_FRAMES];
	*n = 0;
	if (s->nframe_ids > 0) {
		for (int i = 0; i < s->nframe_ids && *n < max; i++)
			frames[(*n)++] = s->frame_ids[i];
		return 0;
	}
	struct ingest_proc *p = ingest_proc(in, s->pid);
	if (!p) {
		in->st.unknown_pid++;
		return -ESRCH;
	}
	if (!p->loaded || p->stale)
		proc_reload(p, false);
	int nu = user_pcs(in, p, s, upcs);
	for (int i = nu - 1; i >= 0; i--)
		push(frames, max, n, frames_user(in->fr, &p->space, upcs[i]));
	for (int i = s->nkpcs - 1; i >= 0; i--)
		push(frames, max, n, frames_kernel(in->fr, s->pid, s->kpcs[i]));
	/* Wall mode: what an off-CPU thread waits in is its innermost frame. */
	if (s->state == SAMPLE_OFFCPU && s->wait != SAMPLE_WAIT_NONE && *n > 0)
		push(frames, max, n, frames_wait(in->fr, s->wait));
	return 0;
}

void ingest_sample(struct ingest *in, const struct sample *s)
{
	uint32_t frames[INGEST_MAX_FRAMES];
	int n = 0;
	in->st.samples++;
	if (ingest_stack(in, s, frames, INGEST_MAX_FRAMES, &n) == 0 && n > 0 && in->w)
		window_add(in->w, s->time_ns, s->tid, frames, (size_t)n, s->weight);
}

static void sink_sample(void *ctx, const struct sample *s)
{
	ingest_sample(ctx, s);
}

static void sink_maps_changed(void *ctx, pid_t pid)
{
	ingest_maps_changed(ctx, pid);
}

static void sink_exec(void *ctx, pid_t pid, const char *comm)
{
	struct ingest *in = ctx;
	struct ingest_proc *p = ingest_proc(in, pid);
	if (p) {
		p->stale = true;
		p->loaded_ns = 0; /* an exec replaces all code: reload at once */
	}
	in->st.execs++;
}

void ingest_sink(struct ingest *in, struct sampler_sink *out)
{
	memset(out, 0, sizeof(*out));
	out->sample = sink_sample;
	out->maps_changed = sink_maps_changed;
	out->exec = sink_exec;
	out->ctx = in;
}

const struct ingest_stats *ingest_get_stats(const struct ingest *in)
{
	return &in->st;
}
