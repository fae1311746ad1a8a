/*
 * perf — the on-CPU sampler (see perf.h for the contract).
 *
 * One event per thread: PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK (the
 * hardware counters are missing on these VMs), sample_period in ns of CPU
 * time = 1e9 / rate. sample_type is IP|TID|TIME|REGS_USER|STACK_USER, plus
 * CALLCHAIN with exclude_callchain_user when kernel frames are allowed: the
 * user part comes from our own DWARF unwinder, so the kernel does not walk
 * frame pointers that -fomit-frame-pointer code does not have.
 *
 * Register mask: AX..IP and R8..R15 (perf_regs.h order). The segment
 * registers DS/ES/FS/GS are rejected for 64-bit tasks by the kernel's
 * perf_reg_validate, so they are left out. Decoded registers are stored in
 * DWARF order in struct sample.
 *
 * Rings: 2^n data pages sized so that one drain interval of samples at the
 * configured rate fits twice; when mmap fails with EPERM (locked-memory
 * limit of an unprivileged user) we retry with smaller rings.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/mem.h"
#include "stacktop/perf.h"
#include "stacktop/ring.h"
#include "stacktop/sampler.h"

/* perf_regs.h (x86) indices we sample, in ascending order. */
enum {
	PR_AX = 0,
	PR_BX,
	PR_CX,
	PR_DX,
	PR_SI,
	PR_DI,
	PR_BP,
	PR_SP,
	PR_IP,
	PR_R8 = 16,
	PR_R15 = 23,
};
#define REGS_MASK                                                                                  \
	(((1ull << (PR_IP + 1)) - 1) | (((1ull << (PR_R15 + 1)) - 1) & ~((1ull << PR_R8) - 1)))
#define NREGS_SAMPLED 17

/* DWARF register number for the i-th sampled perf register. */
static const int dwarf_of_sampled[NREGS_SAMPLED] = {
    0 /* ax */, 3 /* bx */, 2 /* cx */,	 1 /* dx */, 4 /* si */, 5 /* di */,
    6 /* bp */, 7 /* sp */, 16 /* ip */, 8,	     9,		 10,
    11,		12,	    13,		 14,	     15,
};

struct perf_thread {
	pid_t pid, tid;
	int fd;
	void *map;
	size_t map_len;
	struct ring ring;
};

#define PERF_PENDING_MAX 1024

struct perf_sampler {
	struct sampler base; /* the sampler interface (see the end of this file) */
	struct perf_config cfg;
	bool kernel; /* kernel callchains allowed */
	bool kernel_probed;
	unsigned data_pages;
	struct perf_thread *threads;
	int nthreads;
	size_t cap;
	struct perf_stats stats;
	/* As a sampler: where collect delivers, and the threads FORK and EXIT
	 * records announced during the drain, applied after it. */
	const struct sampler_sink *sink;
	pid_t pending_new[PERF_PENDING_MAX][2];
	int npending_new;
	pid_t pending_exit[PERF_PENDING_MAX];
	int npending_exit;
};

static unsigned next_pow2(unsigned v)
{
	unsigned p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

int perf_new(const struct perf_config *cfg, struct perf_sampler **out)
{
	struct perf_sampler *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->cfg = *cfg;
	if (!ps->cfg.rate_hz)
		ps->cfg.rate_hz = 99;
	if (ps->cfg.drain_interval_s <= 0)
		ps->cfg.drain_interval_s = 0.05;
	ps->kernel = true;
	/* Room for two drain intervals of samples, at least 16 pages. */
	double per_interval = ps->cfg.rate_hz * ps->cfg.drain_interval_s + 1;
	double bytes = 2 * per_interval * (ps->cfg.stack_size + 512.0);
	unsigned pages = next_pow2((unsigned)(bytes / 4096) + 1);
	if (pages < 16)
		pages = 16;
	if (pages > 1024)
		pages = 1024;
	ps->data_pages = pages;
	*out = ps;
	return 0;
}

static void perf_thread_close(struct perf_thread *t)
{
	ring_fini(&t->ring);
	if (t->map)
		munmap(t->map, t->map_len);
	if (t->fd >= 0)
		close(t->fd);
}

void perf_free(struct perf_sampler *ps)
{
	if (!ps)
		return;
	for (int i = 0; i < ps->nthreads; i++)
		perf_thread_close(&ps->threads[i]);
	free(ps->threads);
	free(ps);
}

static void perf_fill_attr(const struct perf_sampler *ps, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 1000000000ull / ps->cfg.rate_hz;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (ps->kernel) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 1;
	} else {
		a->exclude_kernel = 1;
	}
	a->sample_regs_user = REGS_MASK;
	a->sample_stack_user = ps->cfg.stack_size;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	if (ps->cfg.enable_on_exec) {
		a->disabled = 1;
		a->enable_on_exec = 1;
	}
}

static int perf_open_fd(struct perf_sampler *ps, pid_t tid)
{
	struct perf_event_attr a;
	perf_fill_attr(ps, &a);
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM) && ps->kernel && !ps->kernel_probed) {
		/* Not allowed to see the kernel: sample user space only. */
		ps->kernel = false;
		perf_fill_attr(ps, &a);
		fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	ps->kernel_probed = true;
	return fd;
}

static int perf_map_ring(struct perf_sampler *ps, struct perf_thread *t)
{
	for (;;) {
		size_t len = (size_t)(ps->data_pages + 1) * 4096;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
		if (m != MAP_FAILED) {
			t->map = m;
			t->map_len = len;
			return ring_init(&t->ring, m, (uint64_t)ps->data_pages * 4096);
		}
		if (errno != EPERM || ps->data_pages <= 2)
			return errno == EPERM ? -ENOMEM : -errno;
		ps->data_pages /= 2; /* over the locked-memory allowance */
	}
}

static struct perf_thread *perf_find(const struct perf_sampler *ps, pid_t tid)
{
	for (int i = 0; i < ps->nthreads; i++)
		if (ps->threads[i].tid == tid)
			return &ps->threads[i];
	return NULL;
}

bool perf_has_thread(const struct perf_sampler *ps, pid_t tid)
{
	return perf_find(ps, tid) != NULL;
}

int perf_nthreads(const struct perf_sampler *ps)
{
	return ps->nthreads;
}

int perf_add_thread(struct perf_sampler *ps, pid_t pid, pid_t tid)
{
	if (perf_find(ps, tid))
		return -EEXIST;
	if (mem_grow((void **)&ps->threads, &ps->cap, (size_t)ps->nthreads + 1,
		     sizeof(*ps->threads)))
		return -ENOMEM;
	struct perf_thread *t = &ps->threads[ps->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->fd = perf_open_fd(ps, tid);
	if (t->fd < 0) {
		ps->stats.threads_failed++;
		return t->fd;
	}
	int err = perf_map_ring(ps, t);
	if (err) {
		perf_thread_close(t);
		ps->stats.threads_failed++;
		return err;
	}
	ps->nthreads++;
	ps->stats.threads_opened++;
	return 0;
}

void perf_remove_thread(struct perf_sampler *ps, pid_t tid)
{
	struct perf_thread *t = perf_find(ps, tid);
	if (!t)
		return;
	perf_thread_close(t);
	*t = ps->threads[--ps->nthreads];
}

bool perf_kernel_enabled(const struct perf_sampler *ps)
{
	return ps->kernel;
}

void perf_exec_done(struct perf_sampler *ps)
{
	ps->cfg.enable_on_exec = false;
}

const struct perf_stats *perf_get_stats(const struct perf_sampler *ps)
{
	return &ps->stats;
}

/* A cursor over a record's payload that never reads past its end. */
struct cursor {
	const uint8_t *p, *end;
};

static int cur_u64(struct cursor *c, uint64_t *v)
{
	if (c->end - c->p < 8)
		return -EBADMSG;
	memcpy(v, c->p, 8);
	c->p += 8;
	return 0;
}

static int cur_skip(struct cursor *c, uint64_t n, const uint8_t **start)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -EBADMSG;
	*start = c->p;
	c->p += n;
	return 0;
}

/* Kernel frames of a callchain: the run after PERF_CONTEXT_KERNEL. */
static void perf_kernel_frames(const uint64_t *ips, uint64_t nr, struct sample *out)
{
	out->kpcs = NULL;
	out->nkpcs = 0;
	for (uint64_t i = 0; i < nr; i++) {
		if (ips[i] != PERF_CONTEXT_KERNEL)
			continue;
		uint64_t j = i + 1;
		while (j < nr && ips[j] < PERF_CONTEXT_MAX)
			j++;
		out->kpcs = &ips[i + 1];
		out->nkpcs = (int)(j - i - 1);
		return;
	}
}

int perf_parse_sample(const void *rec, size_t size, bool callchain, struct sample *out)
{
	struct cursor c = {(const uint8_t *)rec + sizeof(struct perf_event_header),
			   (const uint8_t *)rec + size};
	uint64_t ip, pidtid, time, v;
	const uint8_t *ptr;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(struct perf_event_header))
		return -EBADMSG;
	if (cur_u64(&c, &ip) || cur_u64(&c, &pidtid) || cur_u64(&c, &time))
		return -EBADMSG;
	out->pid = (int)(uint32_t)pidtid;
	out->tid = (int)(uint32_t)(pidtid >> 32);
	out->time_ns = time;
	out->weight = 1;
	out->state = SAMPLE_ONCPU;
	out->syscall_nr = -1;

	if (callchain) {
		uint64_t nr;
		if (cur_u64(&c, &nr) || nr > 4096 || cur_skip(&c, nr * 8, &ptr))
			return -EBADMSG;
		/* ptr is 8-byte aligned inside the record. */
		perf_kernel_frames((const uint64_t *)(const void *)ptr, nr, out);
	}

	uint64_t abi;
	if (cur_u64(&c, &abi))
		return -EBADMSG;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		for (int i = 0; i < NREGS_SAMPLED; i++) {
			if (cur_u64(&c, &v))
				return -EBADMSG;
			out->regs[dwarf_of_sampled[i]] = v;
		}
		out->regs_mask = (1u << SAMPLE_NREGS) - 1;
	}

	uint64_t stack_size;
	if (cur_u64(&c, &stack_size))
		return -EBADMSG;
	if (stack_size) {
		uint64_t dyn;
		if (cur_skip(&c, stack_size, &ptr) || cur_u64(&c, &dyn))
			return -EBADMSG;
		out->stack = ptr;
		out->stack_size = dyn < stack_size ? dyn : stack_size;
	}
	if (!out->regs_mask) {
		/* A kernel thread or a sample with no user context: keep the ip. */
		out->regs[SAMPLE_REG_RIP] = ip;
	}
	return 0;
}

/* The pid and tid in the fixed part of a side-band record that holds at
 * least min bytes: u32 pid at 0, u32 tid at tid_off (4 in COMM and MMAP, 8
 * in FORK and EXIT, after ppid). False when the record is too short. */
static bool record_ids(const struct perf_event_header *h, size_t min, size_t tid_off, uint32_t *pid,
		       uint32_t *tid)
{
	const uint8_t *p = (const uint8_t *)(h + 1);

	if (h->size < sizeof(*h) + min)
		return false;
	memcpy(pid, p, 4);
	memcpy(tid, p + tid_off, 4);
	return true;
}

/* Records with sample_id_all carry pid/tid right after their fixed part;
 * for the ones we use, the fixed part gives pid/tid itself. */
static void perf_dispatch(struct perf_sampler *ps, const struct perf_event_header *h,
			  const struct perf_callbacks *cb, void *ctx, int *nsamples)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	uint32_t pid, tid;

	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct sample s;
		if (perf_parse_sample(h, h->size, ps->kernel, &s)) {
			ps->stats.corrupt++;
			return;
		}
		ps->stats.samples++;
		(*nsamples)++;
		if (cb->sample)
			cb->sample(ctx, &s);
		return;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost[2];
		if (h->size >= sizeof(*h) + 16) {
			memcpy(lost, p, 16);
			ps->stats.lost += lost[1];
		}
		return;
	}
	case PERF_RECORD_THROTTLE:
		ps->stats.throttled++;
		return;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (!record_ids(h, 16, 8, &pid, &tid))
			return;
		if (h->type == PERF_RECORD_FORK && cb->thread_new)
			cb->thread_new(ctx, (pid_t)pid, (pid_t)tid);
		if (h->type == PERF_RECORD_EXIT && cb->thread_exit)
			cb->thread_exit(ctx, (pid_t)pid, (pid_t)tid);
		return;
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || !record_ids(h, 9, 4, &pid, &tid))
			return;
		if (cb->exec) {
			char comm[17] = {0};
			size_t n = h->size - sizeof(*h) - 8;
			memcpy(comm, p + 8, n < 16 ? n : 16);
			cb->exec(ctx, (pid_t)pid, (pid_t)tid, comm);
		}
		return;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (!record_ids(h, 8, 4, &pid, &tid))
			return;
		if (cb->mmap)
			cb->mmap(ctx, (pid_t)pid, (pid_t)tid);
		return;
	default:
		return;
	}
}

/* Every record of one ring through perf_dispatch. */
static void perf_drain_one(struct perf_sampler *ps, struct ring *r,
			   const struct perf_callbacks *cb, void *ctx, int *nsamples)
{
	const struct perf_event_header *h;
	uint64_t before = r->corrupt;
	while (ring_next(r, &h) == 1)
		perf_dispatch(ps, h, cb, ctx, nsamples);
	ps->stats.corrupt += r->corrupt - before;
}

int perf_drain(struct perf_sampler *ps, const struct perf_callbacks *cb, void *ctx)
{
	int nsamples = 0;
	for (int i = 0; i < ps->nthreads; i++)
		perf_drain_one(ps, &ps->threads[i].ring, cb, ctx, &nsamples);
	return nsamples;
}

int perf_drain_ring(struct ring *r, bool kernel, const struct perf_callbacks *cb, void *ctx,
		    struct perf_stats *stats)
{
	struct perf_sampler ps = {.kernel = kernel, .stats = *stats};
	int nsamples = 0;
	perf_drain_one(&ps, r, cb, ctx, &nsamples);
	*stats = ps.stats;
	return nsamples;
}

/* ---- the sampler interface (sampler.h) -----------------------------------
 *
 * perf as a source: collect drains every ring. Threads announced by FORK and
 * EXIT records are queued during the drain (the thread table is being
 * walked) and added or closed right after it; a FORK of a process we do not
 * sample (a child process) is ignored. */

static struct perf_sampler *perf_of(const struct sampler *s)
{
	return (struct perf_sampler *)s;
}

static bool perf_samples_pid(const struct perf_sampler *ps, pid_t pid)
{
	for (int i = 0; i < ps->nthreads; i++)
		if (ps->threads[i].pid == pid)
			return true;
	return false;
}

static void perf_src_sample(void *ctx, const struct sample *s)
{
	const struct sampler_sink *sink = ((struct perf_sampler *)ctx)->sink;
	sink->sample(sink->ctx, s);
}

static void perf_src_thread_new(void *ctx, pid_t pid, pid_t tid)
{
	struct perf_sampler *src = ctx;
	if (src->npending_new < PERF_PENDING_MAX && perf_samples_pid(src, pid)) {
		src->pending_new[src->npending_new][0] = pid;
		src->pending_new[src->npending_new][1] = tid;
		src->npending_new++;
	}
}

static void perf_src_thread_exit(void *ctx, pid_t pid, pid_t tid)
{
	struct perf_sampler *src = ctx;
	if (src->npending_exit < PERF_PENDING_MAX)
		src->pending_exit[src->npending_exit++] = tid;
}

static void perf_src_exec(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	const struct sampler_sink *sink = ((struct perf_sampler *)ctx)->sink;
	if (sink->maps_changed)
		sink->maps_changed(sink->ctx, pid);
	if (sink->exec)
		sink->exec(sink->ctx, pid, comm);
}

static void perf_src_mmap(void *ctx, pid_t pid, pid_t tid)
{
	const struct sampler_sink *sink = ((struct perf_sampler *)ctx)->sink;
	if (sink->maps_changed)
		sink->maps_changed(sink->ctx, pid);
}

static const struct perf_callbacks perf_src_callbacks = {
	.sample = perf_src_sample,
	.thread_new = perf_src_thread_new,
	.thread_exit = perf_src_thread_exit,
	.exec = perf_src_exec,
	.mmap = perf_src_mmap,
};

static int perf_src_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	return perf_add_thread(perf_of(s), pid, tid);
}

static bool perf_src_has_thread(const struct sampler *s, pid_t tid)
{
	return perf_has_thread(perf_of(s), tid);
}

static int perf_src_nthreads(const struct sampler *s)
{
	return perf_nthreads(perf_of(s));
}

static int perf_src_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	struct perf_sampler *src = perf_of(s);
	src->sink = sink;
	int n = perf_drain(src, &perf_src_callbacks, src);
	src->sink = NULL;
	for (int i = 0; i < src->npending_exit; i++)
		perf_remove_thread(src, src->pending_exit[i]);
	src->npending_exit = 0;
	for (int i = 0; i < src->npending_new; i++)
		sampler_add_thread(s, src->pending_new[i][0], src->pending_new[i][1]);
	src->npending_new = 0;
	return n;
}

static int perf_src_launch_prepare(struct sampler *s, pid_t pid)
{
	return perf_add_thread(perf_of(s), pid, pid);
}

static void perf_src_launch_done(struct sampler *s)
{
	perf_exec_done(perf_of(s));
}

static uint64_t perf_src_tick_ns(const struct sampler *s)
{
	return (uint64_t)(perf_of(s)->cfg.drain_interval_s * 1e9);
}

static void perf_src_stats(const struct sampler *s, struct sampler_stats *out)
{
	const struct perf_sampler *ps = perf_of(s);
	const struct perf_stats *st = perf_get_stats(ps);
	out->samples = st->samples;
	out->lost = st->lost;
	out->throttled = st->throttled;
	out->threads_failed = st->threads_failed;
	out->kernel_denied = !perf_kernel_enabled(ps);
	out->rate_hz = ps->cfg.rate_hz;
}

static int read_paranoid(void)
{
	int v = -99;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -99;
		fclose(f);
	}
	return v;
}

void perf_explain(int err, pid_t pid, char *buf, size_t size)
{
	if (err == -EACCES || err == -EPERM)
		snprintf(buf, size,
			 "not permitted to profile process %d (perf_event_paranoid is %d, uid %d): "
			 "run as root (sudo stacktop ...), or give stacktop CAP_PERFMON and "
			 "CAP_SYS_PTRACE, or allow it for your own processes with 'sudo sysctl "
			 "kernel.perf_event_paranoid=1'.",
			 pid, read_paranoid(), (int)getuid());
	else if (err == -ESRCH)
		snprintf(buf, size, "process %d exited before sampling could start.", pid);
	else if (err == -ENOMEM)
		snprintf(buf, size,
			 "could not map the sample buffer for process %d (locked-memory limit): run "
			 "as root or raise 'ulimit -l'.",
			 pid);
	else if (err == -EMFILE || err == -ENFILE)
		snprintf(buf, size, "out of file descriptors (one per thread): raise 'ulimit -n'.");
	else if (err == -ENOSYS || err == -ENOENT || err == -EOPNOTSUPP)
		snprintf(buf, size, "this kernel has no cpu-clock perf event (perf_event_open: %s).",
			 strerror(-err));
	else
		snprintf(buf, size, "cannot sample process %d: %s.", pid, strerror(-err));
}

static void perf_src_free(struct sampler *s)
{
	perf_free(perf_of(s));
}

static const struct sampler_ops perf_sampler_ops = {
	.mode = "cpu",
	.add_thread = perf_src_add_thread,
	.has_thread = perf_src_has_thread,
	.nthreads = perf_src_nthreads,
	.collect = perf_src_collect,
	.launch_prepare = perf_src_launch_prepare,
	.launch_done = perf_src_launch_done,
	.tick_ns = perf_src_tick_ns,
	.stats = perf_src_stats,
	.explain = perf_explain,
	.free = perf_src_free,
};

int perf_sampler_new(const struct perf_config *cfg, struct sampler **out)
{
	struct perf_sampler *ps;
	int err = perf_new(cfg, &ps);
	if (err)
		return err;
	ps->base.ops = &perf_sampler_ops;
	*out = &ps->base;
	return 0;
}
