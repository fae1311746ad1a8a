/*
 * ingest — a sample becomes a stack of frame ids in the window (see
 * ingest.h for the contract).
 *
 * Processes sit in a growing array of (pid, entry) pairs searched
 * linearly, with the last hit tried first: samples come in runs of one
 * thread, and even a build's hundreds of processes cost less to scan than
 * the unwind that follows. Entries are allocated one by one because the
 * unwinder keeps a pointer to its process's space: the array moves, the
 * entries do not. Pids given back recently are remembered (a small ring)
 * so a late sample of a process that ended is dropped, not adopted again
 * with no maps to read.
 */
#include "stacktop/model/ingest.h"
#include "stacktop/lib/mono.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/hashidx.h"
#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/proc/waits.h"
#include "stacktop/proc/target.h"
#include "stacktop/proc/procstat.h"
#include "stacktop/model/window.h"
#include "stacktop/runtime/python.h"

#define RELOAD_EVERY_NS 100000000ull
#define RELEASED_RING 64

struct ingest_proc {
	pid_t pid;
	struct space space;
	struct unwind *uw;
	bool loaded; /* space loaded at least once */
	bool stale;  /* mappings changed: reload before the next unwind */
	uint64_t loaded_ns;
	unsigned exited_gen; /* refresh generation it was said to have ended in; 0: alive */
	unsigned last_gen;   /* refresh generation of its last sample (or of its adding) */
	struct python *py;   /* a CPython's reader, NULL for other processes */
	unsigned py_gen;     /* space generation python_open last looked at */
	bool sampled;	     /* listed in ingest's sampled since the last take */
	char comm[32];	     /* raw: names its root frame (ingest_process_roots) */
};

struct ingest_slot {
	pid_t pid;
	struct ingest_proc *p;
};

struct ingest {
	struct frames *fr;
	struct window *w;
	struct ingest_slot *procs;
	int nprocs;
	size_t cap;
	struct hashidx ix; /* pid → index in procs */
	int last;	   /* index of the last hit */
	bool follow;
	bool py_any_age; /* ingest_python_any_age */
	bool roots;	 /* ingest_process_roots */
	pid_t *sampled;	 /* processes with samples since ingest_take_sampled */
	size_t nsampled, sampled_cap;
	unsigned gen; /* refreshes so far, from 1 */
	pid_t released[RELEASED_RING];
	unsigned nreleased; /* written so far (the ring's next slot mod RELEASED_RING) */
	struct ingest_stats st;
};

int ingest_new(struct frames *fr, struct window *w, struct ingest **out)
{
	struct ingest *in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->fr = fr;
	in->w = w;
	in->gen = 1;
	*out = in;
	return 0;
}

static void proc_free(struct ingest_proc *p)
{
	if (!p)
		return;
	unwind_free(p->uw);
	python_free(p->py);
	space_release(&p->space);
	free(p);
}

void ingest_free(struct ingest *in)
{
	if (!in)
		return;
	for (int i = 0; i < in->nprocs; i++)
		proc_free(in->procs[i].p);
	free(in->procs);
	free(in->sampled);
	hashidx_free(&in->ix);
	free(in);
}

static bool slot_hash(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct ingest *in = ctx;

	if (id >= (uint32_t)in->nprocs)
		return false;
	*h = hashidx_mix64((uint64_t)in->procs[id].pid);
	return true;
}

static bool slot_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct ingest *in = ctx;

	return in->procs[id].pid == *(const pid_t *)key;
}

/* A process's entry by pid: the last hit, else the index (the whole
 * machine holds thousands: no scan a sample). */
static int ingest_index(const struct ingest *in, pid_t pid)
{
	if (in->last < in->nprocs && in->procs[in->last].pid == pid)
		return in->last;
	return (int)hashidx_find(&in->ix, hashidx_mix64((uint64_t)pid), slot_eq, in, &pid, NULL);
}

static struct ingest_proc *ingest_proc(struct ingest *in, pid_t pid)
{
	int i = ingest_index(in, pid);
	if (i < 0)
		return NULL;
	in->last = i;
	return in->procs[i].p;
}

/* Code outside any ELF file (JIT code, -X perf's trampolines). */
static bool in_anon(struct ingest_proc *p, uint64_t pc)
{
	const struct mapping *mp = space_find(&p->space, pc);

	return mp && (!mp->mod || !mp->mod->elf);
}

/* The unwinder's stubs: a CPython's -X perf trampolines. */
static bool proc_stub(void *ctx, uint64_t pc, struct unwind_stub *st)
{
	struct ingest_proc *p = ctx;

	return p->py && python_trampoline(p->py, pc, &st->cfa_off, &st->bp_off);
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
		/* New code (an exec, libpython dlopened): is it CPython now? */
		if (p->space.generation != p->py_gen) {
			p->py_gen = p->space.generation;
			python_free(p->py);
			p->py = NULL;
			python_open(&p->space, &p->py);
		}
	}
	p->loaded_ns = now;
	if (!p->uw && unwind_new(&p->space, &p->uw) == 0)
		unwind_set_stub(p->uw, proc_stub, p);
}

/* A process's name for its root frame; "?" when it cannot be read. */
static void read_comm(pid_t pid, char comm[32])
{
	ssize_t n = procstat_file_read(NULL, pid, 0, "comm", comm, 32);

	if (n <= 0)
		strcpy(comm, "?");
	else if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

int ingest_add_process(struct ingest *in, pid_t pid)
{
	if (ingest_index(in, pid) >= 0)
		return -EEXIST;
	if (in->nprocs >= INGEST_PROCS_MAX)
		return -ENOSPC;
	struct ingest_proc *p = calloc(1, sizeof(*p));
	if (!p ||
	    array_grow((void **)&in->procs, &in->cap, (size_t)in->nprocs + 1, sizeof(*in->procs)) ||
	    hashidx_reserve(&in->ix, (size_t)in->nprocs, (size_t)in->nprocs, 64, slot_hash, in)) {
		free(p);
		return -ENOMEM;
	}
	p->pid = pid;
	p->last_gen = in->gen;
	if (in->roots)
		read_comm(pid, p->comm);
	in->procs[in->nprocs] = (struct ingest_slot){.pid = pid, .p = p};
	hashidx_put(&in->ix, hashidx_mix64((uint64_t)pid), (uint32_t)in->nprocs++);
	in->st.nprocs = in->nprocs;
	proc_reload(p, true);
	return 0;
}

void ingest_python_any_age(struct ingest *in, bool on)
{
	in->py_any_age = on;
}

void ingest_follow(struct ingest *in, bool on)
{
	in->follow = on;
}

void ingest_process_roots(struct ingest *in, bool on)
{
	in->roots = on;
}

size_t ingest_take_sampled(struct ingest *in, pid_t *out, size_t max)
{
	size_t n = in->nsampled < max ? in->nsampled : max;

	memcpy(out, in->sampled, n * sizeof(*out));
	/* Every flag goes down, also of those past max: the next tick sees
	 * them again when they run again. */
	for (size_t i = 0; i < in->nsampled; i++) {
		struct ingest_proc *p = ingest_proc(in, in->sampled[i]);
		if (p)
			p->sampled = false;
	}
	in->nsampled = 0;
	return n;
}

/* Note that p had a sample (once until the next take). */
static void note_sampled(struct ingest *in, struct ingest_proc *p)
{
	if (p->sampled ||
	    array_grow((void **)&in->sampled, &in->sampled_cap, in->nsampled + 1, sizeof(pid_t)))
		return;
	p->sampled = true;
	in->sampled[in->nsampled++] = p->pid;
}

bool ingest_has_process(const struct ingest *in, pid_t pid)
{
	return ingest_index(in, pid) >= 0;
}

bool ingest_any_python(const struct ingest *in)
{
	for (int i = 0; i < in->nprocs; i++)
		if (in->procs[i].p->py)
			return true;
	return false;
}

void ingest_process_exited(struct ingest *in, pid_t pid)
{
	struct ingest_proc *p = ingest_proc(in, pid);
	if (p && !p->exited_gen)
		p->exited_gen = in->gen;
}

static bool recently_released(const struct ingest *in, pid_t pid)
{
	unsigned n = in->nreleased < RELEASED_RING ? in->nreleased : RELEASED_RING;
	for (unsigned i = 0; i < n; i++)
		if (in->released[i] == pid)
			return true;
	return false;
}

/* Give entry i back; the last entry takes its place. */
static void ingest_release(struct ingest *in, int i)
{
	int last = in->nprocs - 1;

	in->released[in->nreleased++ % RELEASED_RING] = in->procs[i].pid;
	hashidx_unslot(
	    &in->ix,
	    hashidx_slot_of(&in->ix, hashidx_mix64((uint64_t)in->procs[i].pid), (uint32_t)i),
	    slot_hash, in);
	if (i != last)
		hashidx_set(&in->ix,
			    hashidx_slot_of(&in->ix, hashidx_mix64((uint64_t)in->procs[last].pid),
					    (uint32_t)last),
			    (uint32_t)i);
	proc_free(in->procs[i].p);
	in->procs[i] = in->procs[--in->nprocs];
	in->last = 0;
	in->st.nprocs = in->nprocs;
	in->st.released++;
}

void ingest_refresh(struct ingest *in)
{
	in->gen++;
	for (int i = 0; i < in->nprocs; i++) {
		struct ingest_proc *p = in->procs[i].p;
		/* Said to have ended before the previous refresh. */
		bool done = p->exited_gen && in->gen > p->exited_gen + 1;
		/* Nobody said it ended: a quiet one is looked at in /proc. */
		if (!done && !p->exited_gen && in->gen - p->last_gen >= INGEST_IDLE_REFRESHES) {
			done = target_exists(p->pid) != 0;
			p->last_gen = in->gen; /* not again before another few refreshes */
		}
		if (done)
			ingest_release(in, i--);
	}
}

/* The process of a sample of pid: known, or adopted when following. */
static struct ingest_proc *sample_proc(struct ingest *in, pid_t pid)
{
	struct ingest_proc *p = ingest_proc(in, pid);
	if (p || !in->follow || pid <= 0 || recently_released(in, pid))
		return p;
	if (ingest_add_process(in, pid) != 0)
		return NULL;
	in->st.adopted++;
	return ingest_proc(in, pid);
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
	if (flags & UNWIND_CACHE_STOPPED)
		in->st.cache_stopped++;
	if ((flags & UNWIND_LIBUNWIND) && !(flags & UNWIND_TRUNCATED))
		in->st.finished++;
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

/* Waiting for work, not a lock: threading's and queue's own waits,
 * built on a lock (3.11+ names them by qualified name, 3.8-3.10 by name). */
static bool python_waits_for_work(const struct frame *f)
{
	static const char *const names[] = {"Condition.wait",
					    "Condition.wait_for",
					    "Event.wait",
					    "Thread.join",
					    "Thread._wait_for_tstate_lock",
					    "Semaphore.acquire",
					    "Barrier.wait",
					    "Queue.get",
					    "Queue.put",
					    "wait",
					    "wait_for",
					    "join",
					    "_wait_for_tstate_lock",
					    "get",
					    "put"};
	const char *file = f->sym.file ? f->sym.file : "";

	if (strcmp(file, "threading.py") && strcmp(file, "queue.py"))
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(f->sym.func, names[i]))
			return true;
	return false;
}

/* CPython, a thread blocked in a futex: the native frames between the
 * leaf and its innermost Python frame say what for (the generic rule
 * would stop at the semaphore under a Lock.acquire: idle). Under
 * PyThread_acquire_lock* a threading lock (lock; threading's own waits
 * for work idle); under PyEval_RestoreThread / PyEval_AcquireThread /
 * take_gil the GIL. NONE: no opinion. */
static enum sample_wait python_wait(struct ingest *in, const uint32_t *frames, int n)
{
	bool lock = false, named = false;

	for (int i = n - 1; i >= 0; i--) {
		const struct frame *f = frames_get(in->fr, frames[i]);
		const char *fn = f && f->has_sym ? f->sym.func : NULL;
		const char *mod = f && f->sym.module ? f->sym.module : "";

		if (!fn || f->wait)
			continue;
		if (f->lang == FRAME_LANG_PYTHON) {
			if (lock)
				return python_waits_for_work(f) ? SAMPLE_WAIT_IDLE
								: SAMPLE_WAIT_LOCK;
			/* Only libc and unnamed interpreter code (Debian's
			 * take_gil is static, stripped) between the wait and
			 * the evaluation loop: the loop waits for the GIL. */
			return named ? SAMPLE_WAIT_NONE : SAMPLE_WAIT_GIL;
		}
		if (!strncmp(fn, "PyThread_acquire_lock", 21))
			lock = true;
		else if (!lock && (!strcmp(fn, "take_gil") || !strcmp(fn, "PyEval_RestoreThread") ||
				   !strcmp(fn, "PyEval_AcquireThread")))
			return SAMPLE_WAIT_GIL;
		else if (!f->sym.by_range && !f->kernel && strncmp(mod, "libc.so", 7) &&
			 strncmp(mod, "libpthread", 10))
			named = true;
	}
	return lock ? SAMPLE_WAIT_LOCK : SAMPLE_WAIT_NONE;
}

/* A futex or a poll is contention or waiting for work: the stack says
 * which (waits_by_function), leaf first. */
static enum sample_wait refine_wait(struct ingest *in, const struct sample *s,
				    const uint32_t *frames, int n, bool python)
{
	enum sample_wait pk;

	if (python && (s->wait == SAMPLE_WAIT_LOCK || s->wait == SAMPLE_WAIT_OTHER) &&
	    (pk = python_wait(in, frames, n)) != SAMPLE_WAIT_NONE)
		return pk;
	for (int i = n - 1; i >= 0; i--) {
		const struct frame *f = frames_get(in->fr, frames[i]);
		enum sample_wait k;
		if (f && f->has_sym &&
		    (k = waits_by_function(s->wait, s->syscall_nr, f->sym.func)) !=
			SAMPLE_WAIT_NONE)
			return k;
	}
	return s->wait;
}

#define PY_FRAMES_MAX 256
/* Later than this after its sample, a sample gets no Python frames
 * (samples are named on the collect tick, every 50 ms). */
#define PY_LATE_NS 250000000ull

/* The Python frames of the sample's thread, innermost first (0 when its
 * process is not CPython or the thread runs no Python). */
static int python_frames(struct ingest *in, struct ingest_proc *p, const struct sample *s,
			 struct python_frame *pf)
{
	unsigned flags = 0;
	int np = 0;

	if (!p->py || python_stack(p->py, s->tid, pf, PY_FRAMES_MAX, &np, &flags) || np == 0)
		return 0;
	/* The Python stack is read now, the native one was copied at the
	 * sample: a sample named long after it (start-up, a slow refresh)
	 * would get whatever the thread runs now. Its native frames stay. */
	if (!in->py_any_age && s->time_ns && mono_ns() > s->time_ns + PY_LATE_NS) {
		in->st.python++;
		in->st.python_unmatched++;
		return 0;
	}
	in->st.python++;
	if (flags & (PYTHON_TORN | PYTHON_TRUNCATED))
		in->st.python_torn++;
	return np;
}

/* Python frames pf[from..to] (innermost first) pushed outermost first. */
static void push_python(struct ingest *in, const struct python_frame *pf, int from, int to,
			uint32_t *frames, int max, int *n)
{
	for (int i = to; i >= from; i--) {
		const char *base = strrchr(pf[i].file, '/');
		struct sym_info si = {.func = pf[i].func,
				      .module = base ? base + 1 : pf[i].file,
				      .file = base ? base + 1 : pf[i].file,
				      .line = pf[i].line};

		push(frames, max, n, frames_script(in->fr, FRAME_LANG_PYTHON, &si));
	}
}

/* The evaluation calls of a Python stack: end[g] is the innermost-first
 * index of group g's entry frame (group 0 the innermost call). */
static int python_groups(const struct python_frame *pf, int np, int *end)
{
	int g = 0;

	for (int i = 0; i < np; i++)
		if (pf[i].entry || i == np - 1)
			end[g++] = i;
	return g;
}

int ingest_stack(struct ingest *in, const struct sample *s, uint32_t *frames, int max, int *n)
{
	struct python_frame pf[PY_FRAMES_MAX];
	int gend[PY_FRAMES_MAX], np = 0, ng = 0, neval = 0;
	bool on_top = false;
	uint64_t upcs[UNWIND_MAX_FRAMES];
	*n = 0;
	if (s->nframe_ids > 0) {
		for (int i = 0; i < s->nframe_ids && *n < max; i++)
			frames[(*n)++] = s->frame_ids[i];
		return 0;
	}
	struct ingest_proc *p = sample_proc(in, s->pid);
	if (!p) {
		/* The whole machine's idle loop (pid 0) is no process. */
		if (!(in->roots && s->pid == 0))
			in->st.unknown_pid++;
		return -ESRCH;
	}
	p->last_gen = in->gen;
	note_sampled(in, p);
	if (!p->loaded || p->stale)
		proc_reload(p, false);
	if (in->roots)
		push(frames, max, n, frames_process(in->fr, p->pid, p->comm));
	int nu = user_pcs(in, p, s, upcs);
	/* CPython: each native evaluation-loop frame becomes the Python
	 * frames it runs, the outermost call the outermost group. */
	if ((np = python_frames(in, p, s, pf)) > 0) {
		ng = python_groups(pf, np, gend);
		for (int i = 0; i < nu; i++)
			neval += python_in_eval(p->py, upcs[i]);
		if (neval != ng) {
			/* Not matched (the thread moved since the sample, an
			 * unwind cut short): the Python frames go on top of the
			 * native ones, not guessed into them. */
			in->st.python_unmatched++;
			neval = 0;
			on_top = true;
		}
	}
	for (int i = nu - 1; i >= 0; i--) {
		if (neval && python_in_eval(p->py, upcs[i])) {
			int g = --neval; /* outermost first: the last group */
			push_python(in, pf, g ? gend[g - 1] + 1 : 0, gend[g], frames, max, n);
			continue;
		}
		/* -X perf: the trampoline that called an evaluation names the
		 * function of the group above it, shown once. */
		if (neval && i > 0 && python_in_eval(p->py, upcs[i - 1]) && in_anon(p, upcs[i]) &&
		    python_trampoline(p->py, upcs[i], NULL, NULL))
			continue;
		/* A pc in inlined code is several frames, innermost first. The
		 * room left after one frame for each pc still to come, the
		 * kernel frames and a wait frame bounds them: a deep stack
		 * loses inline levels, never its leaf. */
		uint32_t ids[SYM_INLINE_MAX + 1];
		int room = max - *n - i - s->nkpcs - 1;
		int lim = room < 1 ? 1 : room > SYM_INLINE_MAX + 1 ? SYM_INLINE_MAX + 1 : room;
		int k = frames_user_chain(in->fr, &p->space, upcs[i], ids, lim);

		while (k > 0)
			push(frames, max, n, ids[--k]);
	}
	if (on_top)
		push_python(in, pf, 0, np - 1, frames, max, n);
	for (int i = s->nkpcs - 1; i >= 0; i--)
		push(frames, max, n, frames_kernel(in->fr, s->pid, s->kpcs[i]));
	/* Wall mode: what an off-CPU thread waits in is its innermost frame. */
	if (s->state == SAMPLE_OFFCPU && s->wait != SAMPLE_WAIT_NONE && *n > 0)
		push(frames, max, n,
		     frames_wait(in->fr, refine_wait(in, s, frames, *n, p->py != NULL)));
	return 0;
}

void ingest_sample(struct ingest *in, const struct sample *s)
{
	uint32_t frames[INGEST_MAX_FRAMES];
	int n = 0;
	in->st.samples++;
	in->st.weight += s->weight;
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
		if (comm && *comm)
			snprintf(p->comm, sizeof(p->comm), "%s", comm);
	}
	in->st.execs++;
}

int ingest_python_state(struct ingest *in, int *tids, int max, bool *gc)
{
	int n = 0;

	*gc = false;
	for (int i = 0; i < in->nprocs; i++) {
		struct python_state st;

		if (!in->procs[i].p->py || python_state(in->procs[i].p->py, &st))
			continue;
		if (st.gil_tid > 0 && n < max)
			tids[n++] = st.gil_tid;
		*gc |= st.gc == 1;
	}
	return n;
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
