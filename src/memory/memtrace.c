/*
 * memtrace — mmap/munmap/brk/mremap and page faults of one process, with
 * stacks, into memhold (see memtrace.h).
 *
 * Tracefs is often not mounted (this VM: /sys/kernel/tracing is an empty
 * directory); perf(1) mounts it for good. We read the few ids we need in a
 * forked child that unshares its mount namespace, makes it private and
 * mounts tracefs there: the mount dies with the child.
 *
 * A tracepoint event needs exclude_kernel = 0 (its sample is taken in the
 * kernel). The events are per task: on every thread of the target, one per
 * CPU, inherited by the threads those create, each CPU's into one ring. Not
 * CPU-wide with pidfilter's BPF program as the CPU samples are: the kernel
 * keeps a tracepoint's BPF programs on the tracepoint itself and ANDs their
 * verdicts, so a filter there would hide the calls of other processes from
 * every other user of these tracepoints (a second stacktop, perf, bpftrace)
 * and theirs would hide ours. Syscall tracepoints sample every call, so
 * per-task events lose nothing on short threads (unlike cpu-clock's
 * period). The page-fault event is a software event, user faults only.
 */
#include "stacktop/memory/memtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stacktop/model/ingest.h"
#include "stacktop/memory/memhold.h"
#include "stacktop/sample/perfevent.h"
#include "stacktop/sample/perfrecord.h"
#include "stacktop/sample/ring.h"

#define MAX_CPUS 1024
#define RING_PAGES 64 /* 256 KiB a ring: ~15 events of 16 KiB stacks per 50 ms tick */
/* Page faults come in bursts (a memset of 4 MiB is 1,024 faults in a few
 * hundred microseconds: 16 samples at 1 in 64): a bigger ring, a smaller
 * stack copy. */
#define FAULT_RING_PAGES 256
/* mmap: MEMTRACE_MAX_HZ calls a second of 16 KiB stacks is 820 KiB per
 * 50 ms tick; 2 MiB leaves room for bursts. */
#define MMAP_RING_PAGES 512
/* munmap is never sampled: 184 bytes a call, 1 MiB holds 50 ms of 100,000
 * calls a second. */
#define MUNMAP_RING_PAGES 256
#define FAULT_STACK 8192
#define PAGE 4096ull /* page rounding of the syscalls' lengths */

/* DWARF register numbers of the syscall arguments and result. */
enum { R_AX = 0, R_DX = 1, R_SI = 4, R_DI = 5 };

static const char *const tp_names[] = {"sys_exit_mmap", "sys_exit_munmap", "sys_exit_brk",
				       "sys_exit_mremap"};

struct mring {
	struct perfevent_ring rb; /* the first thread's event and the CPU's ring */
	enum memtrace_kind kind;
	int *more; /* the other threads' events, output into rb's */
	int nmore;
};

/* One record, decoded, waiting to be applied in time order. */
struct pend {
	uint64_t t;
	enum memtrace_kind kind;
	uint64_t a, b, c, ret;
	int stack;
	uint32_t weight;
};

struct memtrace {
	struct memtrace_config cfg;
	struct ingest *in;
	struct memhold *hold;
	pid_t *tids; /* per-task mode: the threads at start */
	int ntids;
	struct mring *rings;
	int nrings;
	struct pend *pend;
	size_t npend, pcap;
	struct memtrace_stats st;
	uint64_t calls_at_refresh, refresh_ns;
	uint32_t frames[INGEST_MAX_FRAMES];
};

/* ---- tracepoint ids ---- */

static int read_id(const char *dir, const char *name)
{
	char path[256], buf[32];
	snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -EIO;
	buf[r] = '\0';
	int id = atoi(buf);
	return id > 0 ? id : -EIO;
}

static int ids_from(const char *dir, const char *const *names, int n, int *ids)
{
	for (int i = 0; i < n; i++)
		if ((ids[i] = read_id(dir, names[i])) < 0)
			return ids[i];
	return 0;
}

/* In a child: a private mount namespace with tracefs on the usual place. */
static int ids_in_child(const char *const *names, int n, int *ids)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t c = fork();
	if (c < 0) {
		int e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (c == 0) {
		int res[64 + 1];
		close(p[0]);
		res[0] = unshare(CLONE_NEWNS) < 0 ||
				 mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
				 mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0
			     ? -errno
			     : ids_from("/sys/kernel/tracing", names, n < 64 ? n : 64, res + 1);
		ssize_t w = write(p[1], res, sizeof(int) * (size_t)(n + 1));
		_exit(w < 0);
	}
	close(p[1]);
	int res[64 + 1] = {-EIO};
	ssize_t r;
	do
		r = read(p[0], res, sizeof(int) * (size_t)(n + 1));
	while (r < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
		;
	if (r != (ssize_t)(sizeof(int) * (size_t)(n + 1)))
		return -EIO;
	memcpy(ids, res + 1, sizeof(int) * (size_t)n);
	return res[0];
}

int memtrace_tracepoint_ids(const char *const *names, int n, int *ids)
{
	if (n > 64)
		return -E2BIG;
	if (ids_from("/sys/kernel/tracing", names, n, ids) == 0 ||
	    ids_from("/sys/kernel/debug/tracing", names, n, ids) == 0)
		return 0;
	return ids_in_child(names, n, ids);
}

/* ---- events ---- */

static void attr_for(struct memtrace *mt, enum memtrace_kind k, int tp_id,
		     struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	unsigned stack = mt->cfg.stack_size;
	if (k == MEMTRACE_MUNMAP)
		stack = 0;
	else if (k == MEMTRACE_FAULT && stack > FAULT_STACK)
		stack = FAULT_STACK;
	perfevent_attr_user_stack(a, stack);
	a->exclude_hv = 1;
	a->wakeup_events = 0;
	if (k == MEMTRACE_FAULT) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_PAGE_FAULTS;
		a->sample_period = mt->st.fault_period;
		a->exclude_kernel = 1;
	} else {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = (uint64_t)tp_id;
		a->sample_period = 1;
	}
}

/* Per-task mode: the same event on the target's other threads (inherited
 * by the threads they create), written into r's ring. A thread that is
 * gone by now is skipped. */
static int open_more(struct memtrace *mt, struct perf_event_attr *a, int cpu, struct mring *r)
{
	if (mt->ntids > 1 && !(r->more = calloc((size_t)mt->ntids, sizeof(*r->more))))
		return -ENOMEM;
	for (int i = 1; i < mt->ntids; i++) {
		int fd = perfevent_open(a, mt->tids[i], cpu), e;
		if (fd == -ESRCH)
			continue;
		if (fd < 0)
			return fd;
		r->more[r->nmore++] = fd;
		if ((e = perfevent_set_output(fd, r->rb.fd)))
			return e;
	}
	return 0;
}

/* The target's threads now (per-task mode). */
static int list_threads(struct memtrace *mt)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)mt->cfg.pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	int cap = 0;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		if (mt->ntids == cap) {
			cap = cap ? cap * 2 : 64;
			void *p = realloc(mt->tids, (size_t)cap * sizeof(*mt->tids));
			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			mt->tids = p;
		}
		mt->tids[mt->ntids++] = tid;
	}
	closedir(d);
	return mt->ntids ? 0 : -ESRCH;
}

static int open_ring(struct memtrace *mt, enum memtrace_kind k, int tp_id, int cpu, struct mring *r)
{
	struct perf_event_attr a;
	attr_for(mt, k, tp_id, &a);
	a.inherit = 1;
	int fd = perfevent_open(&a, mt->tids[0], cpu);
	if (fd < 0)
		return fd;
	unsigned pages = k == MEMTRACE_FAULT	? FAULT_RING_PAGES
			 : k == MEMTRACE_MUNMAP ? MUNMAP_RING_PAGES
			 : k == MEMTRACE_MMAP	? MMAP_RING_PAGES
						: RING_PAGES;
	int e = perfevent_ring_map(&r->rb, fd, pages);
	if (e) {
		close(fd);
		return e;
	}
	r->kind = k;
	return open_more(mt, &a, cpu, r);
}

static int open_events(struct memtrace *mt, char *err, size_t errsz)
{
	int cpus[MAX_CPUS], ids[4];
	int ncpu = perfevent_online_cpus(cpus, MAX_CPUS), e;
	if (ncpu <= 0) {
		snprintf(err, errsz, "memory attribution: cannot read the online CPUs.");
		return ncpu < 0 ? ncpu : -ENODEV;
	}
	if ((e = memtrace_tracepoint_ids(tp_names, 4, ids))) {
		snprintf(err, errsz,
			 "memory attribution: no syscall tracepoints (tracefs: %s); the kernel "
			 "needs CONFIG_FTRACE_SYSCALLS.",
			 strerror(-e));
		return e;
	}
	if (!(mt->rings = calloc((size_t)ncpu * MEMTRACE_KIND_COUNT, sizeof(*mt->rings))))
		return -ENOMEM;
	for (int k = 0; k < MEMTRACE_KIND_COUNT; k++)
		for (int c = 0; c < ncpu; c++) {
			e = open_ring(mt, (enum memtrace_kind)k, k < 4 ? ids[k] : 0, cpus[c],
				      &mt->rings[mt->nrings]);
			if (e && mt->rings[mt->nrings].rb.map)
				mt->nrings++; /* mapped, its other events failed: freed with it */
			if (e) {
				snprintf(
				    err, errsz,
				    "memory attribution: cannot open the %s event on CPU %d: %s%s.",
				    k < 4 ? tp_names[k] : "page-faults", cpus[c], strerror(-e),
				    e == -EACCES || e == -EPERM ? " (needs root or CAP_PERFMON)"
								: "");
				return e;
			}
			mt->nrings++;
		}
	return 0;
}

int memtrace_new(const struct memtrace_config *cfg, struct ingest *in, struct frames *fr,
		 struct memtrace **out, char *err, size_t errsz)
{
	struct memtrace *mt = calloc(1, sizeof(*mt));
	int e;
	if (!mt)
		return -ENOMEM;
	mt->cfg = *cfg;
	mt->in = in;
	mt->st.period = 1;
	mt->st.fault_period = cfg->fault_period ? cfg->fault_period : MEMTRACE_FAULT_PERIOD;
	if (!mt->cfg.max_hz)
		mt->cfg.max_hz = MEMTRACE_MAX_HZ;
	if ((e = memhold_new(fr, cfg->window_ns, &mt->hold))) {
		snprintf(err, errsz, "memory attribution: out of memory.");
		goto fail;
	}
	/* Per-task events on every thread (see the top of this file). */
	if ((e = list_threads(mt))) {
		snprintf(err, errsz, "memory attribution: cannot list the threads of %d: %s.",
			 (int)cfg->pid, strerror(-e));
		goto fail;
	}
	if ((e = open_events(mt, err, errsz)))
		goto fail;
	*out = mt;
	return 0;
fail:
	memtrace_free(mt);
	return e;
}

void memtrace_free(struct memtrace *mt)
{
	if (!mt)
		return;
	for (int i = 0; i < mt->nrings; i++) {
		for (int k = 0; k < mt->rings[i].nmore; k++)
			close(mt->rings[i].more[k]);
		free(mt->rings[i].more);
		perfevent_ring_close(&mt->rings[i].rb);
	}
	free(mt->tids);
	free(mt->rings);
	free(mt->pend);
	memhold_free(mt->hold);
	free(mt);
}

struct memhold *memtrace_hold(const struct memtrace *mt)
{
	return mt->hold;
}

void memtrace_stats(const struct memtrace *mt, struct memtrace_stats *out)
{
	*out = mt->st;
}

/* ---- records ---- */

static struct pend *pend_add(struct memtrace *mt)
{
	if (mt->npend == mt->pcap) {
		size_t cap = mt->pcap ? mt->pcap * 2 : 256;
		void *p = realloc(mt->pend, cap * sizeof(*mt->pend));
		if (!p)
			return NULL;
		mt->pend = p;
		mt->pcap = cap;
	}
	return &mt->pend[mt->npend++];
}

/* The stack of a sample as a memhold stack: its frames, the leaf side kept
 * when deeper than memhold takes. -errno when it cannot be unwound. */
static int stack_of(struct memtrace *mt, const struct sample *s)
{
	int n = 0;
	int e = ingest_stack(mt->in, s, mt->frames, INGEST_MAX_FRAMES, &n);
	if (e)
		return e;
	const uint32_t *f = mt->frames;
	if (n > MEMHOLD_MAX_FRAMES) {
		f += n - MEMHOLD_MAX_FRAMES;
		n = MEMHOLD_MAX_FRAMES;
	}
	return memhold_stack(mt->hold, f, n);
}

static uint64_t page_up(uint64_t v)
{
	return (v + PAGE - 1) & ~(PAGE - 1);
}

/* One syscall-exit or page-fault sample: its call, pending until the
 * records of every ring are in (memtrace_collect). */
static void on_sample(struct memtrace *mt, enum memtrace_kind k, const struct sample *s)
{
	if (s->pid != mt->cfg.pid || !s->regs_mask)
		return;
	mt->st.events[k]++;
	int64_t ret = (int64_t)s->regs[R_AX];
	if (k != MEMTRACE_FAULT && k != MEMTRACE_BRK && ret < 0 && ret >= -4095) {
		mt->st.failed++;
		return;
	}
	struct pend p = {.t = s->time_ns,
			 .kind = k,
			 .ret = (uint64_t)ret,
			 .stack = -1,
			 .weight = k == MEMTRACE_FAULT	? mt->st.fault_period
				   : k == MEMTRACE_MMAP ? mt->st.period
							: 1};
	p.a = s->regs[R_DI];
	p.b = page_up(s->regs[R_SI]);
	p.c = page_up(s->regs[R_DX]);
	if (k != MEMTRACE_MUNMAP && (p.stack = stack_of(mt, s)) < 0)
		return;
	struct pend *slot = pend_add(mt);
	if (slot)
		*slot = p;
}

static int pend_cmp(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static void apply(struct memtrace *mt, const struct pend *p)
{
	struct memhold *h = mt->hold;
	switch (p->kind) {
	case MEMTRACE_MMAP:
		/* A sampled call stands for period calls. */
		memhold_set_weight(h, p->weight);
		memhold_map(h, p->ret, p->b, p->stack, p->t);
		memhold_set_weight(h, 1);
		break;
	case MEMTRACE_MUNMAP:
		memhold_unmap(h, p->a, p->b);
		break;
	case MEMTRACE_BRK:
		memhold_brk(h, p->ret, p->stack, p->t);
		break;
	case MEMTRACE_MREMAP:
		memhold_remap(h, p->a, p->b, p->ret, p->c, p->stack, p->t);
		break;
	case MEMTRACE_FAULT:
		memhold_fault(h, p->stack, p->weight, p->t);
		break;
	default:
		break;
	}
}

void memtrace_collect(struct memtrace *mt, uint64_t now_ns)
{
	const struct perf_event_header *h;
	struct perfrecord rec;
	mt->npend = 0;
	for (int i = 0; i < mt->nrings; i++) {
		struct mring *r = &mt->rings[i];
		while (ring_next(&r->rb.ring, &h) == 1) {
			if (perfrecord_decode(h, false, &rec))
				continue;
			if (rec.kind == PERFRECORD_SAMPLE)
				on_sample(mt, r->kind, &rec.sample);
			else if (rec.kind == PERFRECORD_LOST)
				*(r->kind == MEMTRACE_FAULT ? &mt->st.lost_faults : &mt->st.lost) +=
				    rec.lost;
		}
	}
	qsort(mt->pend, mt->npend, sizeof(*mt->pend), pend_cmp);
	for (size_t i = 0; i < mt->npend; i++)
		apply(mt, &mt->pend[i]);
}

/* Only mmap is ever sampled: brk is a position (each call must be seen),
 * an unseen mremap or munmap would leave a region held for ever. */
static void set_period(struct memtrace *mt, unsigned period)
{
	for (int i = 0; i < mt->nrings; i++) {
		const struct mring *r = &mt->rings[i];
		if (r->kind != MEMTRACE_MMAP)
			continue;
		perfevent_set_period(r->rb.fd, period);
		for (int k = 0; k < r->nmore; k++)
			perfevent_set_period(r->more[k], period);
	}
	mt->st.period = period;
}

/* The target's mmap calls so far: the events' counts (a sampled-out or
 * lost one is counted too). */
static uint64_t mmap_count(const struct memtrace *mt)
{
	uint64_t sum = 0, v;
	for (int i = 0; i < mt->nrings; i++) {
		const struct mring *r = &mt->rings[i];
		if (r->kind != MEMTRACE_MMAP)
			continue;
		if (perfevent_read_count(r->rb.fd, &v) == 0)
			sum += v;
		for (int k = 0; k < r->nmore; k++)
			if (perfevent_read_count(r->more[k], &v) == 0)
				sum += v;
	}
	return sum;
}

/* Calls a second since the last refresh; over max_hz, sample one in N. */
void memtrace_refresh(struct memtrace *mt, uint64_t now_ns)
{
	uint64_t calls = mmap_count(mt);
	if (mt->refresh_ns && now_ns > mt->refresh_ns)
		mt->st.calls_hz = (double)(calls - mt->calls_at_refresh) * 1e9 /
				  (double)(now_ns - mt->refresh_ns);
	mt->calls_at_refresh = calls;
	mt->refresh_ns = now_ns;
	unsigned want = mt->st.period;
	while (mt->st.calls_hz / want > mt->cfg.max_hz && want < 4096)
		want *= 2;
	while (want > 1 && mt->st.calls_hz / (want / 2) < mt->cfg.max_hz / 2.0)
		want /= 2;
	if (want != mt->st.period)
		set_period(mt, want);
}
