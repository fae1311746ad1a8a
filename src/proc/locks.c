/*
 * locks — lock owners and the wait-for graph (see locks.h).
 *
 * The layouts relied on are glibc's on x86-64 (checked on glibc 2.36 by
 * tests/unit/test_locks.c against the real pthread types):
 *
 *   struct __pthread_mutex_s { int __lock; unsigned __count; int __owner;
 *                              unsigned __nusers; int __kind; ... }
 *     __lock at 0 (the futex word), __owner at 8, __kind at 16.
 *   struct __pthread_rwlock_arch_t { unsigned __readers, __writers,
 *     __wrphase_futex, __writers_futex, __pad3, __pad4; int __cur_writer; ...}
 *     __wrphase_futex at 8, __writers_futex at 12, __cur_writer at 24.
 *
 * How glibc 2.36 waits (nptl/lowlevellock.c, pthread_mutex_lock.c,
 * futex-internal.c): a mutex's __lll_lock_wait calls futex(FUTEX_WAIT, 2)
 * on __lock; a robust mutex futex(FUTEX_WAIT, tid|FUTEX_WAITERS) without the
 * private flag; a PI mutex FUTEX_LOCK_PI, with the owner in the word; every
 * other waiter (condition variables, semaphores, rwlocks, barriers, timed
 * locks) goes through __futex_abstimed_wait_common64 with FUTEX_WAIT_BITSET.
 * So without a stack, only plain FUTEX_WAIT and LOCK_PI are taken as
 * mutexes; with a stack, an rwlock's writer and a timed lock's owner are
 * found too, and a condition variable is never a mutex whatever the op.
 *
 * A mutex's __kind must look like a kind (type 0-3 and the known flag
 * bits), which keeps glibc's internal int locks (malloc arenas, stdio),
 * whose neighbours are anything, from naming a false owner; and any owner
 * must be a live thread of the same process.
 */
#include "stacktop/lib/array.h"
#include "stacktop/proc/locks.h"
#include "stacktop/proc/funckind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define FUTEX_WAIT_ 0
#define FUTEX_LOCK_PI_ 6
#define FUTEX_WAIT_BITSET_ 9
#define FUTEX_LOCK_PI2_ 13
#define FUTEX_CMD(op) ((op) & ~(128 | 256)) /* less PRIVATE_FLAG, CLOCK_REALTIME */
#define FUTEX_WAITERS_ 0x80000000u
#define FUTEX_TID_MASK_ 0x3fffffffu
/* PTHREAD_MUTEX_KIND_MASK_NP | ROBUST | PRIO_INHERIT | PRIO_PROTECT | PSHARED
 * | ELISION | NO_ELISION (glibc pthreadP.h). */
#define MUTEX_KIND_BITS 0x3f3u
#define MUTEX_OWNER_OFF 8
#define MUTEX_KIND_OFF 16
#define RW_CUR_WRITER_OFF 24
#define RW_WRPHASE_OFF 8
#define RW_WRITERS_FUTEX_OFF 12
#define RW_WAIT_WRITER 3 /* 1 | PTHREAD_RWLOCK_FUTEX_USED */

int locks_parse_syscall(const char *text, struct locks_futex *f)
{
	unsigned long long a[3];
	char *end;
	const char *p;
	long nr;

	if (!text)
		return -EINVAL;
	if (strncmp(text, "running", 7) == 0)
		return -ENOENT;
	nr = strtol(text, &end, 10);
	if (end == text)
		return -EINVAL;
	if (nr != SYS_futex)
		return -ENOENT;
	p = end;
	for (int k = 0; k < 3; k++) {
		a[k] = strtoull(p, &end, 16);
		if (end == p)
			return -EINVAL;
		p = end;
	}
	f->addr = a[0];
	f->op = (int)a[1];
	f->val = (uint32_t)a[2];
	return 0;
}

static uint32_t rd32(const uint8_t *mem, int off)
{
	uint32_t v;

	memcpy(&v, mem + LOCKS_MEM_BEFORE + off, sizeof(v));
	return v;
}

static pid_t valid_owner(pid_t cand, pid_t pid, pid_t tid, locks_alive_fn alive, void *ctx)
{
	if (cand <= 0 || cand == tid || !alive || !alive(ctx, pid, cand))
		return 0;
	return cand;
}

/* The owner of a pthread mutex whose lock word is at mem's addr: __owner,
 * when __kind looks like a mutex's. */
static pid_t mutex_owner(const uint8_t *mem)
{
	uint32_t kind = rd32(mem, MUTEX_KIND_OFF);

	if (kind & ~MUTEX_KIND_BITS)
		return 0;
	return (pid_t)rd32(mem, MUTEX_OWNER_OFF);
}

/* An rwlock's writer: the futex is __writers_futex (a writer waiting for
 * the writer) or __wrphase_futex (a reader, or a writer waiting for the
 * phase); readers only wait on the latter. */
static pid_t rwlock_owner(const uint8_t *mem, bool before_ok, enum locks_hint hint, pid_t pid,
			  pid_t tid, locks_alive_fn alive, void *ctx)
{
	static const int offs[] = {RW_WRITERS_FUTEX_OFF, RW_WRPHASE_OFF};
	pid_t o;

	if (!before_ok)
		return 0;
	for (size_t i = hint == LOCKS_HINT_RDLOCK ? 1 : 0; i < 2; i++) {
		int base = -offs[i];
		if ((o = valid_owner((pid_t)rd32(mem, base + RW_CUR_WRITER_OFF), pid, tid, alive,
				     ctx)))
			return o;
	}
	return 0;
}

enum locks_kind locks_decode(const struct locks_futex *f, const uint8_t *mem, bool before_ok,
			     enum locks_hint hint, pid_t pid, pid_t tid, locks_alive_fn alive,
			     void *ctx, pid_t *owner)
{
	int cmd = FUTEX_CMD(f->op);
	uint32_t word;

	*owner = 0;
	if (hint == LOCKS_HINT_NOOWNER)
		return LOCKS_KIND_NOOWNER;
	if (cmd == FUTEX_LOCK_PI_ || cmd == FUTEX_LOCK_PI2_) {
		if (mem)
			*owner = valid_owner((pid_t)(rd32(mem, 0) & FUTEX_TID_MASK_), pid, tid,
					     alive, ctx);
		return LOCKS_KIND_ROBUST;
	}
	if (hint == LOCKS_HINT_RDLOCK || hint == LOCKS_HINT_WRLOCK) {
		/* glibc waits for a writer with 1 | PTHREAD_RWLOCK_FUTEX_USED (2)
		 * on either futex; any other value (readers hold it, or the
		 * hint is stale) names no writer. */
		if (mem && f->val == RW_WAIT_WRITER)
			*owner = rwlock_owner(mem, before_ok, hint, pid, tid, alive, ctx);
		return LOCKS_KIND_RWLOCK;
	}
	if (cmd == FUTEX_WAIT_) {
		/* Robust: glibc waits for the value it saw, owner | FUTEX_WAITERS. */
		if ((f->val & FUTEX_WAITERS_) && (f->val & FUTEX_TID_MASK_)) {
			word = mem ? rd32(mem, 0) : f->val;
			*owner = valid_owner((pid_t)(word & FUTEX_TID_MASK_), pid, tid, alive, ctx);
			return LOCKS_KIND_ROBUST;
		}
		if (f->val != 2)
			return hint == LOCKS_HINT_MUTEX ? LOCKS_KIND_MUTEX : LOCKS_KIND_NOOWNER;
		if (mem)
			*owner = valid_owner(mutex_owner(mem), pid, tid, alive, ctx);
		return LOCKS_KIND_MUTEX;
	}
	/* FUTEX_WAIT_BITSET and the rest: a timed lock only when the stack says so. */
	if (hint == LOCKS_HINT_MUTEX) {
		if (mem)
			*owner = valid_owner(mutex_owner(mem), pid, tid, alive, ctx);
		return LOCKS_KIND_MUTEX;
	}
	return LOCKS_KIND_NOOWNER;
}

/* funckind's word for the function, and for glibc's mutex and rwlock calls
 * which one: their layouts are the ones locks_decode knows. A lock that is
 * not one of those (__lll_lock_wait: glibc's internal locks too, a C++ or
 * Rust mutex) says nothing, so the caller looks further up the stack. */
enum locks_hint locks_hint_of_function(const char *fn)
{
	enum funckind_lock lock;

	switch (funckind_lock_of(fn, &lock)) {
	case FUNCKIND_IDLE:
		return LOCKS_HINT_NOOWNER; /* condition variable, semaphore, barrier, join */
	case FUNCKIND_LOCK:
		return lock == FUNCKIND_LOCK_MUTEX    ? LOCKS_HINT_MUTEX
		       : lock == FUNCKIND_LOCK_RDLOCK ? LOCKS_HINT_RDLOCK
		       : lock == FUNCKIND_LOCK_WRLOCK ? LOCKS_HINT_WRLOCK
						      : LOCKS_HINT_NONE;
	default:
		return LOCKS_HINT_NONE;
	}
}

static bool alive_proc(void *ctx, pid_t pid, pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* A zombie or dead thread holds nothing any more. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* The bytes around addr; *before_ok false when only [addr, ...) could be
 * read (the word at the start of a page). */
static int read_mem(pid_t pid, uint64_t addr, uint8_t *mem, bool *before_ok)
{
	struct iovec local, remote;
	size_t after = LOCKS_MEM_SIZE - LOCKS_MEM_BEFORE;

	memset(mem, 0, LOCKS_MEM_SIZE);
	*before_ok = addr >= LOCKS_MEM_BEFORE;
	local = (struct iovec){.iov_base = mem, .iov_len = LOCKS_MEM_SIZE};
	remote = (struct iovec){.iov_base = (void *)(uintptr_t)(addr - LOCKS_MEM_BEFORE),
				.iov_len = LOCKS_MEM_SIZE};
	if (*before_ok && process_vm_readv(pid, &local, 1, &remote, 1, 0) == LOCKS_MEM_SIZE)
		return 0;
	*before_ok = false;
	local = (struct iovec){.iov_base = mem + LOCKS_MEM_BEFORE, .iov_len = after};
	remote = (struct iovec){.iov_base = (void *)(uintptr_t)addr, .iov_len = after};
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)after)
		return 0;
	return errno ? -errno : -EIO;
}

int locks_read_raw(pid_t pid, pid_t tid, struct locks_raw *r)
{
	char path[64], buf[256];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	memset(r, 0, sizeof(*r));
	if ((e = locks_parse_syscall(buf, &r->f)))
		return e;
	r->mem_err = read_mem(pid, r->f.addr, r->mem, &r->before_ok);
	return 0;
}

void locks_resolve(const struct locks_raw *r, pid_t pid, pid_t tid, enum locks_hint hint,
		   struct locks_wait *out)
{
	*out = (struct locks_wait){.pid = pid, .tid = tid, .addr = r->f.addr};
	out->kind = locks_decode(&r->f, r->mem_err ? NULL : r->mem, r->before_ok, hint, pid, tid,
				 alive_proc, NULL, &out->owner);
}

int locks_read_thread(pid_t pid, pid_t tid, enum locks_hint hint, struct locks_wait *out)
{
	struct locks_raw r;
	int e;

	if ((e = locks_read_raw(pid, tid, &r)))
		return e;
	locks_resolve(&r, pid, tid, hint, out);
	return r.mem_err;
}

void locks_reset(struct locks *g)
{
	g->n = 0;
	g->ncycles = 0;
	g->read_err = 0;
	g->read_err_pid = 0;
}

/* Grow *p (an array of *cap elements of size sz) to hold need. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(q = realloc(*p, c * sz)))
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

int locks_add(struct locks *g, const struct locks_wait *w)
{
	if (grow((void **)&g->w, &g->cap, (size_t)g->n + 1, sizeof(*g->w)))
		return -ENOMEM;
	g->w[g->n] = *w;
	g->w[g->n].cycle = 0;
	g->n++;
	return 0;
}

static int index_of(const struct locks *g, pid_t tid)
{
	for (int i = 0; i < g->n; i++)
		if (g->w[i].tid == tid)
			return i;
	return -1;
}

const struct locks_wait *locks_find(const struct locks *g, pid_t tid)
{
	int i = g ? index_of(g, tid) : -1;

	return i < 0 ? NULL : &g->w[i];
}

int locks_waiters_on(const struct locks *g, pid_t owner)
{
	int k = 0;

	for (int i = 0; g && owner > 0 && i < g->n; i++)
		k += g->w[i].owner == owner;
	return k;
}

/* Each wait has at most one edge (to its owner's own wait), so the graph is
 * functional: walk from each unvisited wait, colouring the path; meeting a
 * wait of the current walk closes a cycle. */
int locks_build(struct locks *g)
{
	int *mark, *next, i, j, walk = 0;

	g->ncycles = 0;
	if (!g->n)
		return 0;
	mark = calloc((size_t)g->n, sizeof(*mark));
	next = calloc((size_t)g->n, sizeof(*next));
	if (!mark || !next) {
		free(mark);
		free(next);
		return -ENOMEM;
	}
	for (i = 0; i < g->n; i++) {
		g->w[i].cycle = 0;
		next[i] = g->w[i].owner > 0 ? index_of(g, g->w[i].owner) : -1;
	}
	size_t used = 0;
	for (i = 0; i < g->n; i++) {
		if (mark[i])
			continue;
		walk++;
		for (j = i; j >= 0 && !mark[j]; j = next[j])
			mark[j] = walk;
		if (j < 0 || mark[j] != walk)
			continue;
		/* j is on a new cycle: start it at its lowest TID. */
		int start = j, len = 0, k = j;
		do {
			if (g->w[k].tid < g->w[start].tid)
				start = k;
			len++;
			k = next[k];
		} while (k != j);
		if (grow((void **)&g->tids, &g->tids_cap, used + (size_t)len, sizeof(*g->tids)) ||
		    grow((void **)&g->cycles, &g->cycles_cap, (size_t)g->ncycles + 1,
			 sizeof(*g->cycles))) {
			free(mark);
			free(next);
			return -ENOMEM;
		}
		g->cycles[g->ncycles] = (struct locks_cycle){.first = (int)used, .n = len};
		g->ncycles++;
		k = start;
		do {
			g->tids[used++] = g->w[k].tid;
			g->w[k].cycle = g->ncycles;
			k = next[k];
		} while (k != start);
	}
	free(mark);
	free(next);
	return 0;
}

/* Decay every owner's count; drop faded owners and waiters left with none. */
static void hold_decay(struct locks *g, double keep)
{
	int k = 0;

	for (int i = 0; i < g->nhold; i++) {
		struct locks_hold *h = &g->hold[i];
		int m = 0;

		for (int j = 0; j < h->nowners; j++) {
			h->o[j].n *= keep;
			if (h->o[j].n >= 0.01)
				h->o[m++] = h->o[j];
		}
		h->nowners = m;
		if (m)
			g->hold[k++] = *h;
	}
	g->nhold = k;
}

static int hold_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct locks_hold *)a)->waiter,
	      y = ((const struct locks_hold *)b)->waiter;
	return (x > y) - (x < y);
}

/* The entry of waiter among the first n (sorted), or NULL. */
static struct locks_hold *hold_find(const struct locks *g, int n, pid_t waiter)
{
	struct locks_hold key = {.waiter = waiter};
	return n > 0 ? bsearch(&key, g->hold, (size_t)n, sizeof(*g->hold), hold_cmp) : NULL;
}

/* One more wait of h's waiter on owner: its count, a new slot, or the
 * faintest owner's place when all LOCKS_HOLD_OWNERS are taken. */
static void hold_count(struct locks_hold *h, pid_t owner)
{
	int j, low = 0;

	for (j = 0; j < h->nowners; j++) {
		if (h->o[j].owner == owner)
			break;
		if (h->o[j].n < h->o[low].n)
			low = j;
	}
	if (j == h->nowners) {
		j = h->nowners < LOCKS_HOLD_OWNERS ? h->nowners++ : low;
		h->o[j].owner = owner;
		h->o[j].n = 0;
	}
	h->o[j].n += 1;
}

int locks_tally(struct locks *g, double keep)
{
	int sorted;

	hold_decay(g, keep);
	sorted = g->nhold;
	for (int i = 0; i < g->n; i++) {
		const struct locks_wait *w = &g->w[i];
		struct locks_hold *h;

		if (w->kind == LOCKS_KIND_NOOWNER || w->kind == LOCKS_KIND_NONE)
			continue;
		/* Each thread waits once a scan: new waiters go after the
		 * sorted part, sorted in once the scan is counted. */
		h = hold_find(g, sorted, w->tid);
		if (!h) {
			if (grow((void **)&g->hold, &g->hold_cap, (size_t)g->nhold + 1,
				 sizeof(*g->hold)))
				return -ENOMEM;
			h = &g->hold[g->nhold++];
			*h = (struct locks_hold){.waiter = w->tid};
		}
		hold_count(h, w->owner);
	}
	if (g->nhold > sorted)
		qsort(g->hold, (size_t)g->nhold, sizeof(*g->hold), hold_cmp);
	return 0;
}

int locks_held_by(const struct locks *g, pid_t waiter, pid_t *owners, double *shares, int max)
{
	const struct locks_hold *h = g && max > 0 ? hold_find(g, g->nhold, waiter) : NULL;
	double sum = 0;
	int i, j, k = 0;

	if (!h)
		return 0;
	for (i = 0; i < h->nowners; i++)
		sum += h->o[i].n;
	for (i = 0; sum > 0 && i < h->nowners; i++) {
		double sh = h->o[i].n / sum;
		if (k == max && sh <= shares[max - 1])
			continue;
		/* Insert sorted, most first; when full the smallest falls off. */
		j = k < max ? k++ : max - 1;
		for (; j > 0 && shares[j - 1] < sh; j--) {
			owners[j] = owners[j - 1];
			shares[j] = shares[j - 1];
		}
		owners[j] = h->o[i].owner;
		shares[j] = sh;
	}
	return k;
}

const char *locks_kind_name(enum locks_kind k)
{
	switch (k) {
	case LOCKS_KIND_MUTEX:
		return "mutex";
	case LOCKS_KIND_ROBUST:
		return "robust mutex";
	case LOCKS_KIND_RWLOCK:
		return "rwlock";
	case LOCKS_KIND_NOOWNER:
		return "futex";
	default:
		return "";
	}
}

void locks_free(struct locks *g)
{
	ARRAY_FREE_ALL(g->w, g->tids, g->cycles, g->hold);
	*g = (struct locks){0};
}
