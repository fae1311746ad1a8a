/*
 * stackset — a loaded profile's stacks, threads and facts (see
 * stackset.h).
 *
 * Stacks: frame ids (outermost first) in one flat array, plus (offset,
 * length, tid, weight, second) per stack. Threads: a short list searched
 * linearly (a profile names few), with a one-entry cache of the last tid
 * added, since a reader adds a thread's stacks one after another.
 */
#include "stacktop/formats/stackset.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/summary.h"
#include "stacktop/proc/waits.h"
#include "stacktop/symbols/frames.h"

#define STACKSET_MAX_FRAMES (1u << 25) /* 128 MiB of frame ids */
#define STACKSET_IDS_PER_BYTE 8
#define STACKSET_IDS_BASE (1u << 20)

struct thread {
	int tid;
	const char *name; /* pooled */
};

/* One stored stack: ids[off .. off + n). */
struct rstack {
	size_t off;
	uint32_t n;
	uint32_t weight;
	int tid;
	int32_t second; /* since the recording's start, or -1: not said */
};

struct stackset {
	enum stackset_format format;
	struct frames *fr;	/* borrowed */
	struct strpool strings; /* names, modules, files (parsing) */
	uint32_t *ids;
	size_t nids, capids;
	struct rstack *stacks;
	size_t nstacks, capstacks;
	struct thread *threads;
	size_t nthreads, capthreads;
	double period_s, duration_s;
	const char *mode;
	uint64_t samples;
	int last_tid;	/* stackset_add's cache: tid already in threads[] */
	size_t untimed; /* stacks without a second */
	struct summary summary;
	bool have_summary;
	double *cpu; /* per-second CPU (stackset_set_cpu) */
	size_t ncpu;
	int64_t cpu_at; /* the stacks' second of cpu[0] (cpu_1s_at) */
	bool have_cpu_at;
	size_t max_ids; /* frame ids the input's size allows */
};

int stackset_new(struct frames *fr, size_t max_ids, struct stackset **out)
{
	struct stackset *ss = calloc(1, sizeof(*ss));

	*out = ss;
	if (!ss)
		return -ENOMEM;
	ss->fr = fr;
	ss->max_ids = max_ids;
	return 0;
}

void stackset_free(struct stackset *ss)
{
	if (!ss)
		return;
	strpool_free(&ss->strings);
	free(ss->cpu);
	ARRAY_FREE_ALL(ss->ids, ss->stacks, ss->threads, ss);
}

size_t stackset_ids_limit(size_t len)
{
	if (len >= (STACKSET_MAX_FRAMES - STACKSET_IDS_BASE) / STACKSET_IDS_PER_BYTE)
		return STACKSET_MAX_FRAMES;
	return len * STACKSET_IDS_PER_BYTE + STACKSET_IDS_BASE;
}

int stackset_ids_push(struct stackset_ids *a, uint32_t id)
{
	if (array_grow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return -ENOMEM;
	a->v[a->n++] = id;
	return 0;
}

struct strpool *stackset_strings(struct stackset *ss)
{
	return &ss->strings;
}

/* A whole-machine profile's process root frame ("comm (pid)" in module
 * "[process]", as frames_process names it) is one again: views and
 * writers treat it as the process, not as a function. */
static int64_t process_frame(struct stackset *ss, const struct stackset_frame *f)
{
	const char *open = f->func ? strrchr(f->func, '(') : NULL;
	char comm[96], *end;
	long pid;

	if (!open || open == f->func || open[-1] != ' ' || (size_t)(open - f->func) > 65)
		return -EINVAL;
	pid = strtol(open + 1, &end, 10);
	if (end == open + 1 || strcmp(end, ")") || pid <= 0 || pid > INT32_MAX)
		return -EINVAL;
	snprintf(comm, sizeof(comm), "%.*s", (int)(open - f->func - 1), f->func);
	return frames_process(ss->fr, (int)pid, comm);
}

int64_t stackset_frame(struct stackset *ss, const struct stackset_frame *f)
{
	int64_t id;

	if (f->module && !strcmp(f->module, "[process]") && !f->kernel &&
	    (id = process_frame(ss, f)) != -EINVAL)
		return id;
	struct sym_info si = {
	    .func = f->func,
	    .module = f->module,
	    .file = f->file,
	    .line = f->line,
	    .kernel = f->kernel,
	    .jit = f->jit,
	    .inlined = f->inlined,
	};

	return frames_named_at(ss->fr, &si, f->origin);
}

int stackset_thread(struct stackset *ss, int tid, const char *name)
{
	for (size_t i = 0; i < ss->nthreads; i++)
		if (ss->threads[i].tid == tid) {
			if (!ss->threads[i].name)
				ss->threads[i].name = name;
			return 0;
		}
	if (array_grow((void **)&ss->threads, &ss->capthreads, ss->nthreads + 1,
		       sizeof(*ss->threads)))
		return -ENOMEM;
	ss->threads[ss->nthreads++] = (struct thread){.tid = tid, .name = name};
	return 0;
}

/* The wait kind a leaf frame names ("[sleep]", "[lock]", ... as wall mode
 * writes them, module "[wait]" or none), or SAMPLE_WAIT_NONE. */
static enum sample_wait leaf_wait(const struct frames *fr, uint32_t id)
{
	const struct frame *f = frames_get(fr, id);

	if (!f || f->kernel || !f->sym.func || f->sym.func[0] != '[' ||
	    (f->sym.module && strcmp(f->sym.module, "[wait]")))
		return SAMPLE_WAIT_NONE;
	for (int k = SAMPLE_WAIT_NONE + 1; k < SAMPLE_WAIT_COUNT; k++)
		if (!strcmp(f->sym.func, waits_frame_name((enum sample_wait)k)))
			return (enum sample_wait)k;
	return SAMPLE_WAIT_NONE;
}

uint64_t stackset_scale(uint64_t max)
{
	return max > UINT32_MAX ? max / UINT32_MAX + 1 : 1;
}

int stackset_add(struct stackset *ss, int tid, int32_t second, uint32_t *frames, size_t n,
		 uint64_t count, uint64_t scale)
{
	uint64_t wgt = count / scale;
	enum sample_wait kind;
	int err;

	if (n && (kind = leaf_wait(ss->fr, frames[n - 1])) != SAMPLE_WAIT_NONE) {
		int64_t id = frames_wait(ss->fr, kind);
		if (id < 0)
			return (int)id;
		frames[n - 1] = (uint32_t)id;
		if (!ss->mode)
			ss->mode = "wall";
	}

	if (count && !wgt)
		wgt = 1; /* a sample too light to show after scaling still exists */
	if (!wgt || !n)
		return 0;
	if (wgt > UINT32_MAX)
		wgt = UINT32_MAX;
	if (n > ss->max_ids - ss->nids)
		return -EFBIG;
	if (array_grow((void **)&ss->ids, &ss->capids, ss->nids + n, sizeof(*ss->ids)) ||
	    array_grow((void **)&ss->stacks, &ss->capstacks, ss->nstacks + 1, sizeof(*ss->stacks)))
		return -ENOMEM;
	memcpy(ss->ids + ss->nids, frames, n * sizeof(*frames));
	ss->stacks[ss->nstacks++] = (struct rstack){.off = ss->nids,
						    .n = (uint32_t)n,
						    .weight = (uint32_t)wgt,
						    .tid = tid,
						    .second = second};
	ss->untimed += second < 0;
	ss->nids += n;
	if (tid != ss->last_tid && (err = stackset_thread(ss, tid, NULL)))
		return err;
	ss->last_tid = tid;
	ss->samples += wgt;
	return 0;
}

size_t stackset_max_ids(const struct stackset *ss)
{
	return ss->max_ids;
}

int stackset_load_errf(const struct stackset *ss, int rc, const char *name, const char *invalid,
		       const char *bad, char *err, size_t errsz)
{
	if (rc == -EINVAL)
		text_errf(err, errsz, "%s: %s: %s.", name, invalid, bad ? bad : "bad data");
	else if (rc == -EFBIG)
		text_errf(err, errsz, STACKSET_TOO_MANY_FRAMES, name, stackset_max_ids(ss));
	else if (rc)
		text_errf(err, errsz, "%s: cannot load the profile: %s.", name, strerror(-rc));
	return rc;
}

void stackset_set_max_ids(struct stackset *ss, size_t max_ids)
{
	ss->max_ids = max_ids;
}

void stackset_set_format(struct stackset *ss, enum stackset_format f)
{
	ss->format = f;
}

void stackset_set_mode(struct stackset *ss, const char *mode)
{
	ss->mode = mode;
}

void stackset_set_period_s(struct stackset *ss, double period_s)
{
	ss->period_s = period_s;
}

void stackset_set_duration_s(struct stackset *ss, double duration_s)
{
	ss->duration_s = duration_s;
}

void stackset_set_summary(struct stackset *ss, const struct summary *s)
{
	ss->summary = *s;
	ss->have_summary = true;
}

int stackset_set_cpu(struct stackset *ss, const double *v, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));

	if (!c)
		return -ENOMEM;
	memcpy(c, v, n * sizeof(*c));
	free(ss->cpu);
	ss->cpu = c;
	ss->ncpu = n;
	return 0;
}

void stackset_parse_cpu(struct stackset *ss, const char *s, size_t len)
{
	double *v;
	int n;

	if (!summary_cpu_at_parse(s, len, &ss->cpu_at)) {
		ss->have_cpu_at = true;
		return;
	}
	if (len < sizeof(SUMMARY_CPU_KEY) || !(v = malloc(SUMMARY_CPU_MAX * sizeof(*v))))
		return;
	if ((n = summary_cpu_parse(s, len, v)) > 0)
		stackset_set_cpu(ss, v, (size_t)n);
	free(v);
}

bool stackset_cpu_at(const struct stackset *ss, int64_t *at)
{
	*at = ss->cpu_at;
	return ss->have_cpu_at;
}

const double *stackset_cpu(const struct stackset *ss, size_t *n)
{
	*n = ss->cpu ? ss->ncpu : 0;
	return *n ? ss->cpu : NULL;
}

enum stackset_format stackset_format(const struct stackset *ss)
{
	return ss->format;
}

double stackset_period_s(const struct stackset *ss)
{
	return ss->period_s;
}

double stackset_duration_s(const struct stackset *ss)
{
	return ss->duration_s;
}

const char *stackset_mode(const struct stackset *ss)
{
	return ss->mode;
}

uint64_t stackset_samples(const struct stackset *ss)
{
	return ss->samples;
}

size_t stackset_nstacks(const struct stackset *ss)
{
	return ss->nstacks;
}

void stackset_stack(const struct stackset *ss, size_t i, struct stackset_stack *out)
{
	const struct rstack *st = &ss->stacks[i];

	*out = (struct stackset_stack){.ids = ss->ids + st->off,
				       .n = st->n,
				       .weight = st->weight,
				       .tid = st->tid,
				       .second = st->second};
}

bool stackset_timed(const struct stackset *ss)
{
	return ss->nstacks && !ss->untimed;
}

const struct summary *stackset_summary(const struct stackset *ss)
{
	return ss->have_summary ? &ss->summary : NULL;
}

size_t stackset_nthreads(const struct stackset *ss)
{
	return ss->nthreads;
}

bool stackset_has_thread(const struct stackset *ss, int tid)
{
	for (size_t i = 0; i < ss->nthreads; i++)
		if (ss->threads[i].tid == tid)
			return true;
	return false;
}

const char *stackset_thread_name(void *ctx, int tid)
{
	const struct stackset *ss = ctx;

	if (!ss)
		return NULL;
	for (size_t i = 0; i < ss->nthreads; i++)
		if (ss->threads[i].tid == tid && ss->threads[i].name)
			return ss->threads[i].name;
	return tid == STACKSET_TID_ANY ? "all" : NULL;
}
