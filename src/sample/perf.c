/*
 * perf — the on-CPU sampler (see perf.h for the contract).
 *
 * Three layers: the events (cpu-clock attributes, opening, rings) are set
 * up by perfevent.c, the records read from the rings are decoded by
 * perfrecord.c, and this file is the sampler over them: which events a
 * target gets in each of the three modes below, the thread table, and what
 * a decoded record does to it. perfsource.c puts it behind the sampler
 * interface.
 *
 * Per-CPU mode (the default where allowed). One cpu-clock event per online
 * CPU with pid -1, so the clock runs per CPU, whatever task is on it: a
 * thread's samples follow its CPU time from its first instruction, however
 * short it lives (an inherited per-task event restarts a full period in
 * every new thread, so a thread of 1.5 ms at 99 Hz was almost never
 * sampled). A BPF program (pidfilter.c) drops, before anything is copied,
 * every sample whose process is not in its map: the targets, and the child
 * processes they fork (added as their FORK records are read; the first
 * drain interval of a child's life is lost). Side-band records of the
 * whole machine come too and are filtered here. Needs CAP_PERFMON and
 * CAP_BPF (or root); refused, we fall back to inherit mode and
 * perf_stats.fallback_err says why. Dead processes leave the map at the
 * sweep.
 *
 * Inherit mode. A thread we open gets one event per online
 * CPU, with inherit=1, so every thread (and process) it creates from then
 * on carries copies of them from its first instruction. The kernel refuses
 * to mmap an inherited cpu -1 event (perf_mmap: EINVAL), so the events are
 * per CPU, and all events of one CPU write into ONE ring: the first event a
 * CPU gets is mapped, later ones are pointed at it with
 * PERF_EVENT_IOC_SET_OUTPUT (the kernel allows it for the same CPU and
 * clock), as `perf record -p` does. Side-band records (FORK, EXIT, COMM,
 * MMAP2) of a task go out through its event of the CPU it runs on, so each
 * arrives once; sample_id_all gives the pid/tid of every record.
 *
 * The thread table: OPENED threads have events of their own; COVERED ones
 * were announced by a FORK record and sample through inheritance, so
 * add_thread for them is -EEXIST (opening them again would double their
 * samples). A thread that /proc shows before its FORK record is drained is
 * the race to close: add_thread reads ahead in the rings for FORK records
 * (ring_peek), opens at once a thread that started before its process had
 * events (its start time in /proc/PID/task/TID/stat), and otherwise leaves
 * it PENDING until a drain at least 20 ms later, which has its FORK record
 * or opens it. FORK and EXIT records are applied after each drain in time
 * order (a child's EXIT may sit in a ring read before its FORK). Closing an
 * event ends its inherited copies too, so a thread's events stay open
 * while a thread that inherited them may live (a reference count); the
 * ring-owning event of a CPU stays open until the end. A FORK or EXIT
 * record lost to a full ring leaves a stale entry: swept (tgkill 0) every
 * 2 s. Inherited events follow child processes too: their samples carry
 * another pid, which ingest drops unless it was told of that process.
 *
 * Per-thread mode (perf_config.per_thread, or the fallback when the first
 * thread's per-CPU inherited events are refused but a per-thread event is
 * not; perf_stats.fallback_err says why): one event per thread, cpu -1, no
 * inherit, its own ring; new threads are opened from FORK records or by
 * the /proc rescan, so a short-lived thread is mostly missed.
 *
 * Rings: 2^n data pages holding a second of samples at the configured
 * rate (a CPU runs at most one CPU second per second, whatever its
 * threads), within 64 MiB over all CPUs (perf_ring_pages); when mmap fails
 * with EPERM (locked-memory limit of an unprivileged user) we retry with
 * smaller rings. perf_drain first empties every ring into the backlog
 * (backlog.h), then names the samples from there, emptying the rings again
 * every 2 ms meanwhile; slow loaders (symbols, DWARF, kallsyms) empty them
 * through perf_pump between their steps (lib/pump.h). So the rings only
 * need to outlast the time stacktop waits for a CPU. The CPU rings are
 * read one after the other: records of two CPUs are not merged by time
 * (ingest does not need it, but FORK/EXIT are sorted, see above).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/array.h"
#include "stacktop/sample/perf.h"
#include "stacktop/sample/perfevent.h"
#include "stacktop/sample/perfrecord.h"
#include "stacktop/sample/pidfilter.h"
#include "stacktop/sample/ring.h"
#include "stacktop/sample/backlog.h"

/* The events opened on one thread (one per CPU, or one with cpu -1),
 * shared with the threads that inherited them: closing an event also ends
 * its inherited copies, so it stays open while any of them may live.
 * refs: the thread itself plus every covered thread that descends from it. */
struct perf_ev {
	int refs;
	int nfd;
	int *fds; /* per CPU slot; -1 where the event was given to the CPU's ring */
	struct perfevent_ring *rb; /* per-thread mode: its own ring */
};

enum perf_tstate {
	PT_OPENED,    /* its own events (add_thread) */
	PT_COVERED,   /* created under our events: sampled through inheritance */
	PT_PENDING,   /* seen in /proc, maybe inherited: decided after the next drain */
	PT_UNCOVERED, /* no FORK record after a drain: opened directly next time */
};

struct perf_thread {
	pid_t pid, tid;
	enum perf_tstate state;
	struct perf_ev *ev; /* OPENED: its own; COVERED: its ancestor's (or NULL) */
	uint64_t since_ns;  /* PENDING: when it was seen */
};

/* A process with events: since when (boot-time clock ticks, as
 * /proc/PID/task/TID/stat's start time), and how many threads hold them. */
struct perf_proc {
	pid_t pid;
	int nlive;
	uint64_t since_ticks;
};

/* A FORK or EXIT record, kept until the rings are drained and then applied
 * in time order (a child's EXIT may sit in another CPU's ring than the FORK
 * that made it, and that ring may be read first). */
struct perf_task_rec {
	uint64_t time;
	pid_t pid, ppid, tid, ptid;
	bool fork;
};

static struct perf_task_rec perf_task_of(const struct perfrecord *r)
{
	return (struct perf_task_rec){
	    .time = r->time,
	    .pid = r->pid,
	    .ppid = r->ppid,
	    .tid = r->tid,
	    .ptid = r->ptid,
	    .fork = r->kind == PERFRECORD_FORK,
	};
}

#define PERF_MAX_CPUS 1024
#define PERF_PENDING_MIN_NS 20000000ull /* a PENDING thread waits this long */
#define PERF_SWEEP_NS 2000000000ull	/* stale covered threads swept this often */
/* The backlog's bound: some seconds of samples at 999 Hz with 16 KiB stacks
 * on a few CPUs; past it the kernel drops and counts what the rings lose. */
#define PERF_BACKLOG_MAX (128u << 20)
#define PERF_STASH_EVERY_NS 2000000ull /* rings read this often while dispatching */
/* Ring sizes: a ring holds PERF_RING_S of samples at the rate (a CPU runs
 * at most one CPU second per second, whichever threads run there), each
 * the stack copy plus PERF_RECORD_EXTRA (registers, header, a callchain:
 * the kernel's frames and the user's frame-pointer walk), as a power of two of pages; all rings
 * together at most PERF_RINGS_MAX, one at most PERF_RING_MAX_PAGES, at least 16 pages. */
#define PERF_RING_S 1.0
#define PERF_RECORD_EXTRA 1536.0
#define PERF_RINGS_MAX (64u << 20)
#define PERF_RING_MAX_PAGES 4096u

struct perf_sampler {
	struct perf_config cfg;
	struct perfevent_clock clk; /* the events' attributes, the kernel probe */
	bool per_thread;	    /* today's fallback: cpu -1, no inherit, a ring each */
	bool wide;		    /* per-CPU mode: CPU-wide events, filter keeps our pids */
	bool wide_tried;
	struct pidfilter *filter;
	bool opened_any;
	unsigned data_pages;
	int ncpus;
	int cpu_ids[PERF_MAX_CPUS];
	struct perfevent_ring *cpu_rb; /* ncpus of them; fd -1 until a thread gives one */
	struct perf_thread *threads;
	int nthreads; /* entries, whatever their state */
	size_t cap;
	struct hashidx ix; /* tid → entry */
	struct perf_proc *procs;
	int nprocs;
	size_t procs_cap;
	struct perf_task_rec *task;
	size_t ntask, task_cap;
	uint64_t last_sweep_ns;
	struct perf_stats stats;
	/* Records read out of the rings, not dispatched yet (see perf_drain). */
	struct backlog backlog;
	uint64_t last_stash_ns;
};

static unsigned next_pow2(unsigned v)
{
	unsigned p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

unsigned perf_ring_pages(unsigned rate_hz, unsigned stack_size, int ncpus)
{
	/* A ring per thread (ncpus 0): as many rings as threads, so each
	 * holds only a fifth of a second, in 4 MiB at most. */
	double secs = ncpus > 0 ? PERF_RING_S : 0.2;
	double bytes = (rate_hz * secs + 1) * (stack_size + PERF_RECORD_EXTRA);
	unsigned pages = next_pow2((unsigned)(bytes / 4096) + 1);
	unsigned most = ncpus > 0 ? PERF_RINGS_MAX / 4096 / (unsigned)ncpus : 1024;
	if (pages > most)
		pages = most;
	if (pages > PERF_RING_MAX_PAGES)
		pages = PERF_RING_MAX_PAGES;
	if (pages < 16)
		pages = 16;
	return next_pow2(pages) == pages ? pages : next_pow2(pages) / 2;
}

static int perf_all_open(struct perf_sampler *ps);

/* The backlog keeps a sample's stack copy only as far as the kernel filled
 * it (perfrecord_cut_stack): at 999 Hz the first second's backlog is
 * megabytes of 16 KiB copies otherwise. Cut with the layout the sample
 * will be read with: every CPU clock event samples the callchain (the
 * user's frame-pointer walk, kernel frames or not: perfevent.h), as
 * perf_dispatch reads it. */
static size_t perf_cut(const struct perf_event_header *rec, void *dst, void *ctx)
{
	(void)ctx;
	return perfrecord_cut_stack(rec, true, dst);
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
	ps->clk = (struct perfevent_clock){
	    .rate_hz = ps->cfg.rate_hz, .stack_size = ps->cfg.stack_size, .kernel = true};
	ps->per_thread = cfg->events == PERF_EVENTS_THREAD;
	ps->wide_tried = cfg->events == PERF_EVENTS_INHERIT || ps->per_thread;
	ps->ncpus = perfevent_online_cpus(ps->cpu_ids, PERF_MAX_CPUS);
	ps->cpu_rb = calloc((size_t)ps->ncpus, sizeof(*ps->cpu_rb));
	if (!ps->cpu_rb) {
		free(ps);
		return -ENOMEM;
	}
	for (int i = 0; i < ps->ncpus; i++)
		ps->cpu_rb[i].fd = -1;
	ps->data_pages =
	    perf_ring_pages(ps->cfg.rate_hz, ps->cfg.stack_size, ps->per_thread ? 0 : ps->ncpus);
	backlog_init(&ps->backlog, PERF_BACKLOG_MAX);
	backlog_set_cut(&ps->backlog, perf_cut, ps);
	ps->stats.events = ps->per_thread ? PERF_EVENTS_THREAD : PERF_EVENTS_INHERIT;
	if (cfg->all) {
		/* The whole machine: CPU-wide events now, no filter, no
		 * threads to add. Refused, it is an error: nothing else
		 * samples every process. */
		int err = perf_all_open(ps);
		if (err) {
			perf_free(ps);
			return err;
		}
	}
	*out = ps;
	return 0;
}

static void perf_ev_close(struct perf_ev *ev)
{
	for (int i = 0; i < ev->nfd; i++)
		if (ev->fds[i] >= 0)
			close(ev->fds[i]);
	if (ev->rb) {
		perfevent_ring_close(ev->rb);
		free(ev->rb);
	}
	free(ev->fds);
	free(ev);
}

static void perf_ev_put(struct perf_ev *ev)
{
	if (ev && --ev->refs == 0)
		perf_ev_close(ev);
}

void perf_free(struct perf_sampler *ps)
{
	if (!ps)
		return;
	/* Inherited copies first, then the events they came from. */
	for (int i = 0; i < ps->nthreads; i++)
		if (ps->threads[i].state == PT_COVERED)
			perf_ev_put(ps->threads[i].ev);
	for (int i = 0; i < ps->nthreads; i++)
		if (ps->threads[i].state == PT_OPENED)
			perf_ev_put(ps->threads[i].ev);
	for (int i = 0; i < ps->ncpus; i++)
		perfevent_ring_close(&ps->cpu_rb[i]);
	pidfilter_free(ps->filter);
	backlog_fini(&ps->backlog);
	free(ps->cpu_rb);
	free(ps->threads);
	hashidx_free(&ps->ix);
	ARRAY_FREE_ALL(ps->procs, ps->task, ps);
}

/* Open the clock event on tid and cpu as this mode has it: inherited by
 * new threads in inherit mode; CPU-wide events start enabled. */
static int perf_open_fd(struct perf_sampler *ps, pid_t tid, int cpu)
{
	ps->clk.inherit = !ps->per_thread && !ps->wide;
	ps->clk.enable_on_exec = ps->cfg.enable_on_exec && !ps->wide;
	return perfevent_open_clock(&ps->clk, tid, cpu);
}

/* ---- the thread table: tid → entry (hashidx over ps->threads) ---- */

static bool perf_tid_hash(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct perf_sampler *ps = ctx;
	*h = hashidx_mix64((uint64_t)ps->threads[id].tid);
	return true;
}

static bool perf_tid_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct perf_sampler *ps = ctx;
	return ps->threads[id].tid == *(const pid_t *)key;
}

static struct perf_thread *perf_find(const struct perf_sampler *ps, pid_t tid)
{
	int64_t id =
	    hashidx_find(&ps->ix, hashidx_mix64((uint64_t)tid), perf_tid_eq, ps, &tid, NULL);
	return id < 0 ? NULL : &ps->threads[id];
}

static struct perf_proc *perf_proc_of(const struct perf_sampler *ps, pid_t pid)
{
	for (int i = 0; i < ps->nprocs; i++)
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
	return NULL;
}

/* Count one more (or one fewer) thread of pid holding events; a process
 * new to the table has had them since mono_ns (CLOCK_MONOTONIC, 0: now). */
static void perf_proc_count(struct perf_sampler *ps, pid_t pid, int delta, uint64_t mono_ns)
{
	struct perf_proc *p = perf_proc_of(ps, pid);
	if (!p && delta > 0 &&
	    !array_grow((void **)&ps->procs, &ps->procs_cap, (size_t)ps->nprocs + 1,
			sizeof(*ps->procs))) {
		p = &ps->procs[ps->nprocs++];
		p->pid = pid;
		p->nlive = 0;
		uint64_t mono = clock_ns(CLOCK_MONOTONIC), boot = clock_ns(CLOCK_BOOTTIME);
		if (mono_ns && mono_ns < mono)
			boot -= mono - mono_ns;
		p->since_ticks = boot / (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
	}
	if (!p)
		return;
	p->nlive += delta;
	if (p->nlive <= 0)
		*p = ps->procs[--ps->nprocs];
}

static bool perf_live(enum perf_tstate st)
{
	return st == PT_OPENED || st == PT_COVERED;
}

/* A new entry for tid (not in the table). NULL: out of memory. */
static struct perf_thread *perf_insert(struct perf_sampler *ps, pid_t pid, pid_t tid,
				       enum perf_tstate st, uint64_t mono_ns)
{
	size_t slot;
	if (array_grow((void **)&ps->threads, &ps->cap, (size_t)ps->nthreads + 1,
		       sizeof(*ps->threads)) ||
	    hashidx_reserve(&ps->ix, (size_t)ps->nthreads, (size_t)ps->nthreads, 64, perf_tid_hash,
			    ps))
		return NULL;
	hashidx_find(&ps->ix, hashidx_mix64((uint64_t)tid), perf_tid_eq, ps, &tid, &slot);
	struct perf_thread *t = &ps->threads[ps->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->state = st;
	hashidx_set(&ps->ix, slot, (uint32_t)ps->nthreads);
	ps->nthreads++;
	if (perf_live(st))
		perf_proc_count(ps, pid, 1, mono_ns);
	return t;
}

/* Change t's state, keeping the per-process counts. */
static void perf_set_state(struct perf_sampler *ps, struct perf_thread *t, enum perf_tstate st)
{
	if (perf_live(t->state) != perf_live(st))
		perf_proc_count(ps, t->pid, perf_live(st) ? 1 : -1, 0);
	t->state = st;
}

/* Drop entry t: its reference to events, its slot (the last entry moves
 * into its place). */
static void perf_erase(struct perf_sampler *ps, struct perf_thread *t)
{
	uint32_t id = (uint32_t)(t - ps->threads), last = (uint32_t)ps->nthreads - 1;
	uint64_t h = hashidx_mix64((uint64_t)t->tid);

	if (perf_live(t->state))
		perf_proc_count(ps, t->pid, -1, 0);
	perf_ev_put(t->ev);
	hashidx_unslot(&ps->ix, hashidx_slot_of(&ps->ix, h, id), perf_tid_hash, ps);
	if (id != last) {
		uint64_t hl = hashidx_mix64((uint64_t)ps->threads[last].tid);
		hashidx_unslot(&ps->ix, hashidx_slot_of(&ps->ix, hl, last), perf_tid_hash, ps);
		ps->threads[id] = ps->threads[last];
		ps->nthreads--;
		hashidx_put(&ps->ix, hl, id);
	} else {
		ps->nthreads--;
	}
}

bool perf_has_thread(const struct perf_sampler *ps, pid_t tid)
{
	const struct perf_thread *t = perf_find(ps, tid);
	return t && t->state != PT_UNCOVERED;
}

int perf_nthreads(const struct perf_sampler *ps)
{
	int n = 0;
	for (int i = 0; i < ps->nthreads; i++)
		n += ps->threads[i].state != PT_UNCOVERED;
	return n;
}

/* ---- opening a thread's events ---- */

/* Per-thread mode: one event, cpu -1, its own ring. */
static int perf_open_per_thread(struct perf_sampler *ps, pid_t tid, struct perf_ev *ev)
{
	int fd = perf_open_fd(ps, tid, -1);
	if (fd < 0)
		return fd;
	ev->rb = calloc(1, sizeof(*ev->rb));
	if (!ev->rb) {
		close(fd);
		return -ENOMEM;
	}
	int err = perfevent_ring_map_fit(ev->rb, fd, &ps->data_pages);
	if (err) {
		close(fd);
		free(ev->rb);
		ev->rb = NULL;
	}
	return err;
}

/* Inherit mode: an event on every online CPU; the first one a CPU gets
 * becomes its ring, the others write into it (PERF_EVENT_IOC_SET_OUTPUT:
 * the same CPU, the same clock). A CPU that refuses (ENODEV: gone offline)
 * is skipped. On failure everything this call opened is closed again,
 * rings it created included (no other thread writes there yet). */
static int perf_open_per_cpu(struct perf_sampler *ps, pid_t tid, struct perf_ev *ev)
{
	int opened = 0, err = 0;
	bool created[PERF_MAX_CPUS] = {false};

	ev->fds = malloc((size_t)ps->ncpus * sizeof(*ev->fds));
	if (!ev->fds)
		return -ENOMEM;
	ev->nfd = ps->ncpus;
	for (int i = 0; i < ps->ncpus; i++)
		ev->fds[i] = -1;
	for (int i = 0; i < ps->ncpus; i++) {
		int fd = perf_open_fd(ps, tid, ps->cpu_ids[i]);
		if (fd == -ENODEV)
			continue;
		if (fd < 0) {
			err = fd;
			break;
		}
		struct perfevent_ring *rb = &ps->cpu_rb[i];
		if (rb->fd < 0) {
			err = perfevent_ring_map_fit(rb, fd, &ps->data_pages);
			created[i] = !err;
		} else if ((err = perfevent_set_output(fd, rb->fd)) == 0) {
			ev->fds[i] = fd;
		}
		if (err) {
			close(fd);
			break;
		}
		opened++;
	}
	if (!err && !opened)
		err = -ENODEV;
	if (err) {
		for (int i = 0; i < ps->ncpus; i++) {
			if (ev->fds[i] >= 0)
				close(ev->fds[i]);
			ev->fds[i] = -1;
			if (created[i])
				perfevent_ring_close(&ps->cpu_rb[i]);
		}
	}
	return err;
}

static int perf_open_thread(struct perf_sampler *ps, struct perf_thread *t)
{
	struct perf_ev *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->refs = 1;
	int err = ps->per_thread ? perf_open_per_thread(ps, t->tid, ev)
				 : perf_open_per_cpu(ps, t->tid, ev);
	if (err && !ps->per_thread && !ps->opened_any && err != -ESRCH && err != -EMFILE &&
	    err != -ENFILE && err != -ENOMEM) {
		/* Inherited per-CPU events refused where a per-thread one may
		 * not be: fall back to today's mode, and say why. */
		free(ev->fds);
		ev->fds = NULL;
		ev->nfd = 0;
		ps->per_thread = true;
		int err2 = perf_open_per_thread(ps, t->tid, ev);
		if (err2) {
			ps->per_thread = false;
		} else {
			ps->stats.events = PERF_EVENTS_THREAD;
			ps->stats.fallback_err = err;
		}
		err = err2;
	}
	if (err) {
		perf_ev_close(ev);
		ps->stats.threads_failed++;
		ps->stats.last_err = err;
		return err;
	}
	t->ev = ev;
	ps->opened_any = true;
	ps->stats.threads_opened++;
	return 0;
}

/* When thread tid of pid started, in boot-time clock ticks (0: unknown). */
static uint64_t perf_thread_start(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	unsigned long long start = 0;
	/* After the name: state, then fields 4..21, then starttime (22). */
	if (!p || sscanf(p + 2,
			 "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %llu",
			 &start) != 1)
		return 0;
	return start;
}

/* ---- per-CPU mode ---- */

static void perf_wide_close(struct perf_sampler *ps)
{
	for (int i = 0; i < ps->ncpus; i++)
		perfevent_ring_close(&ps->cpu_rb[i]);
	pidfilter_free(ps->filter);
	ps->filter = NULL;
	ps->wide = false;
}

/* One filtered CPU-wide event per online CPU, each its own ring. A CPU
 * that refuses with ENODEV (gone offline) is skipped. */
static int perf_wide_open(struct perf_sampler *ps)
{
	int err = ps->cfg.all ? 0 : pidfilter_new(&ps->filter), opened = 0;
	ps->wide = true; /* perf_open_fd: no inherit, no enable_on_exec */
	for (int i = 0; !err && i < ps->ncpus; i++) {
		int fd = perf_open_fd(ps, -1, ps->cpu_ids[i]);
		if (fd == -ENODEV)
			continue;
		if (fd < 0) {
			err = fd;
			break;
		}
		if ((ps->filter && (err = pidfilter_attach(ps->filter, fd))) ||
		    (err = perfevent_ring_map_fit(&ps->cpu_rb[i], fd, &ps->data_pages))) {
			close(fd);
			break;
		}
		opened++;
	}
	if (!err && !opened)
		err = -ENODEV;
	if (err)
		perf_wide_close(ps);
	return err;
}

/* The first thread decides: per-CPU mode if the kernel lets us, else
 * inherit mode (the reason kept); -errno only when per-CPU was asked for. */
static int perf_wide_try(struct perf_sampler *ps)
{
	ps->wide_tried = true;
	int err = perf_wide_open(ps);
	if (!err) {
		ps->stats.events = PERF_EVENTS_CPU;
		return 0;
	}
	ps->stats.fallback_err = err;
	if (ps->cfg.events == PERF_EVENTS_CPU) {
		ps->stats.threads_failed++;
		ps->stats.last_err = err;
		return err;
	}
	ps->clk.kernel = true; /* the probe starts again for per-task events */
	ps->clk.kernel_probed = false;
	return 0;
}

/* Per-CPU mode: the thread's process joins the filter; the thread needs
 * nothing of its own. */
static int perf_wide_add(struct perf_sampler *ps, pid_t pid, pid_t tid)
{
	if (syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH)
		return -ESRCH;
	int err = pidfilter_add(ps->filter, pid);
	if (err) {
		ps->stats.threads_failed++;
		ps->stats.last_err = err;
		return err;
	}
	ps->stats.filtered_pids = pidfilter_count(ps->filter);
	if (!perf_insert(ps, pid, tid, PT_OPENED, 0))
		return -ENOMEM;
	ps->stats.threads_opened++;
	return 0;
}

/* A side-band record of the whole machine: ours if its process is
 * filtered in. A FORK that makes a process of one of ours brings the new
 * process into the filter (inherit mode follows children too). */
static bool perf_wide_keep(struct perf_sampler *ps, const struct perfrecord *r)
{
	if (!ps->filter || pidfilter_has(ps->filter, r->pid))
		return true;
	/* A new process (pid == tid) whose parent is ours. */
	if (r->kind != PERFRECORD_FORK || r->pid != r->tid || !pidfilter_has(ps->filter, r->ppid))
		return false;
	if (pidfilter_add(ps->filter, r->pid))
		return false;
	ps->stats.filtered_pids = pidfilter_count(ps->filter);
	return true;
}

/* Processes that are gone leave the filter (their pid may be reused). */
static void perf_wide_sweep(struct perf_sampler *ps)
{
	if (!ps->filter)
		return;
	for (int i = 0; i < pidfilter_count(ps->filter); i++) {
		pid_t pid = pidfilter_pid(ps->filter, i);
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			pidfilter_remove(ps->filter, pid);
			i--;
		}
	}
	ps->stats.filtered_pids = pidfilter_count(ps->filter);
}

/* The whole machine (perf_config.all): per-CPU events without a filter. */
static int perf_all_open(struct perf_sampler *ps)
{
	ps->wide_tried = true;
	int err = perf_wide_open(ps);
	if (!err)
		ps->stats.events = PERF_EVENTS_CPU;
	return err;
}

/* Read ahead in every CPU ring for FORK records, so a thread created by
 * one of ours since the last drain is known as inherited. */
static void perf_peek_fork(void *ctx, const struct perf_event_header *h);

int perf_add_thread(struct perf_sampler *ps, pid_t pid, pid_t tid)
{
	struct perf_thread *t = perf_find(ps, tid);
	if (t && t->state != PT_UNCOVERED)
		return -EEXIST;
	if (!ps->wide_tried) {
		int err = perf_wide_try(ps);
		if (err)
			return err;
	}
	if (ps->wide)
		return perf_wide_add(ps, pid, tid);
	if (!t && !ps->per_thread && perf_proc_of(ps, pid)) {
		/* pid has events: tid may be their inherited copy, its FORK
		 * record not drained yet. */
		backlog_peek(&ps->backlog, perf_peek_fork, ps);
		for (int i = 0; i < ps->ncpus; i++)
			if (ps->cpu_rb[i].fd >= 0)
				ring_peek(&ps->cpu_rb[i].ring, perf_peek_fork, ps);
		t = perf_find(ps, tid);
		if (t)
			return t->state == PT_UNCOVERED ? perf_add_thread(ps, pid, tid) : -EEXIST;
		/* Not seen: a thread older than the events is not theirs;
		 * a younger one waits for the next drain. */
		uint64_t start = perf_thread_start(pid, tid);
		if (!start)
			return -ESRCH;
		if (start + 2 >= perf_proc_of(ps, pid)->since_ticks) {
			t = perf_insert(ps, pid, tid, PT_PENDING, 0);
			if (!t)
				return -ENOMEM;
			t->since_ns = clock_ns(CLOCK_MONOTONIC);
			return 0;
		}
	}
	if (!t && !(t = perf_insert(ps, pid, tid, PT_UNCOVERED, 0)))
		return -ENOMEM;
	int err = perf_open_thread(ps, t);
	if (err == -ESRCH)
		perf_erase(ps, t);
	else if (!err)
		perf_set_state(ps, t, PT_OPENED);
	return err;
}

void perf_remove_thread(struct perf_sampler *ps, pid_t tid)
{
	struct perf_thread *t = perf_find(ps, tid);
	if (t)
		perf_erase(ps, t);
}

/* FORK: tid is a copy of ptid, and inherits whatever events ptid has. */
static void perf_note_fork(struct perf_sampler *ps, const struct perf_task_rec *r)
{
	struct perf_thread *parent = perf_find(ps, r->ptid);
	struct perf_thread *t = perf_find(ps, r->tid);
	struct perf_ev *root = parent && perf_live(parent->state) ? parent->ev : NULL;

	if (t && t->state == PT_COVERED)
		return; /* seen ahead of the drain */
	if (t)
		perf_erase(ps, t); /* pending, uncovered, or a stale entry of a reused tid */
	t = perf_insert(ps, r->pid, r->tid, PT_COVERED, r->time);
	if (!t)
		return;
	t->ev = root;
	if (root)
		root->refs++;
	ps->stats.threads_inherited++;
}

static void perf_peek_fork(void *ctx, const struct perf_event_header *h)
{
	struct perf_sampler *ps = ctx;
	struct perfrecord r;
	/* Only FORK records: a sample is not worth decoding here. */
	if (h->type != PERF_RECORD_FORK || perfrecord_decode(h, false, &r))
		return;
	struct perf_task_rec t = perf_task_of(&r);
	perf_note_fork(ps, &t);
}

/* After a drain: threads left pending long enough had no FORK record, so
 * they are not inherited: open them now. */
static void perf_resolve_pending(struct perf_sampler *ps)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	bool any = false;
	for (int i = 0; i < ps->nthreads && !any; i++)
		any = ps->threads[i].state == PT_PENDING;
	if (!any)
		return;
	/* A FORK record may wait in the backlog, read from a ring during the
	 * drain and handed out at the next one: it covers its thread now. */
	backlog_peek(&ps->backlog, perf_peek_fork, ps);
	for (int i = 0; i < ps->nthreads; i++) {
		struct perf_thread *t = &ps->threads[i];
		if (t->state != PT_PENDING || now - t->since_ns < PERF_PENDING_MIN_NS)
			continue;
		t->state = PT_UNCOVERED;
		int err = perf_open_thread(ps, t);
		if (err == -ESRCH) {
			perf_erase(ps, t);
			i--;
		} else if (!err) {
			perf_set_state(ps, t, PT_OPENED);
		}
	}
}

/* Threads whose EXIT record was lost (or read before its FORK) stay in the
 * table: drop those that are gone, every few seconds. */
static void perf_sweep(struct perf_sampler *ps)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	if (now - ps->last_sweep_ns < PERF_SWEEP_NS)
		return;
	ps->last_sweep_ns = now;
	if (ps->wide)
		perf_wide_sweep(ps);
	for (int i = 0; i < ps->nthreads; i++) {
		struct perf_thread *t = &ps->threads[i];
		if (t->state == PT_COVERED && syscall(SYS_tgkill, t->pid, t->tid, 0) < 0 &&
		    errno == ESRCH) {
			perf_erase(ps, t);
			i--;
		}
	}
}

bool perf_kernel_enabled(const struct perf_sampler *ps)
{
	return ps->clk.kernel;
}

void perf_exec_done(struct perf_sampler *ps)
{
	ps->cfg.enable_on_exec = false;
}

const struct perf_stats *perf_get_stats(const struct perf_sampler *ps)
{
	return &ps->stats;
}

const struct perf_config *perf_get_config(const struct perf_sampler *ps)
{
	return &ps->cfg;
}

bool perf_has_process(const struct perf_sampler *ps, pid_t pid)
{
	return perf_proc_of(ps, pid) != NULL;
}

/* What a decoded record does: samples to the callback, counts to the
 * stats, FORK and EXIT queued for perf_task_apply, exec and mmap to their
 * callbacks. In per-CPU mode the side-band records of every process on the
 * machine arrive: only those of processes the filter keeps go on. */
static void perf_dispatch(struct perf_sampler *ps, const struct perf_event_header *h,
			  const struct perf_callbacks *cb, void *ctx, int *nsamples)
{
	struct perfrecord r;

	if (perfrecord_decode(h, true, &r)) {
		if (r.kind == PERFRECORD_SAMPLE)
			ps->stats.corrupt++;
		return; /* a side-band record too short to use is skipped */
	}
	if (ps->wide && perfrecord_is_sideband(r.kind) && !perf_wide_keep(ps, &r))
		return;
	switch (r.kind) {
	case PERFRECORD_SAMPLE:
		ps->stats.samples++;
		(*nsamples)++;
		if (cb->sample)
			cb->sample(ctx, &r.sample);
		return;
	case PERFRECORD_LOST:
		ps->stats.lost += r.lost;
		return;
	case PERFRECORD_THROTTLE:
		ps->stats.throttled++;
		return;
	case PERFRECORD_FORK:
	case PERFRECORD_EXIT:
		if (r.kind == PERFRECORD_FORK && r.pid == r.tid && r.pid != r.ppid)
			ps->stats.forks++;
		/* The whole machine keeps no thread table. */
		if (ps->cfg.all)
			return;
		/* Applied after the drain, in time order (perf_task_apply). */
		if (array_grow((void **)&ps->task, &ps->task_cap, ps->ntask + 1, sizeof(*ps->task)))
			return;
		ps->task[ps->ntask++] = perf_task_of(&r);
		return;
	case PERFRECORD_EXEC:
		if (cb->exec)
			cb->exec(ctx, r.pid, r.tid, r.comm);
		return;
	case PERFRECORD_MMAP:
		if (cb->mmap)
			cb->mmap(ctx, r.pid, r.tid);
		return;
	case PERFRECORD_OTHER:
		return;
	}
}

/* Every ring's records into the backlog. */
static void perf_stash(struct perf_sampler *ps)
{
	struct ring *r;
	ps->last_stash_ns = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < (ps->per_thread ? ps->nthreads : ps->ncpus); i++) {
		if (ps->per_thread)
			r = ps->threads[i].state == PT_OPENED && ps->threads[i].ev->rb
				? &ps->threads[i].ev->rb->ring
				: NULL;
		else
			r = ps->cpu_rb[i].fd >= 0 ? &ps->cpu_rb[i].ring : NULL;
		if (!r)
			continue;
		uint64_t before = r->corrupt;
		int n = backlog_take_ring(&ps->backlog, r);
		ps->stats.corrupt += r->corrupt - before;
		if (n == -ENOSPC)
			return; /* full: the rest stays in the rings */
	}
	if (ps->backlog.peak > ps->stats.backlog_peak)
		ps->stats.backlog_peak = ps->backlog.peak;
}

void perf_pump(struct perf_sampler *ps)
{
	perf_stash(ps);
}

/* The records in the backlog when the drain began through perf_dispatch,
 * oldest first; the rings are read again every PERF_STASH_EVERY_NS
 * meanwhile (a sample's first pc in a module loads the module), and what
 * that brings waits for the next drain, so a drain ends even when the
 * samples come faster than they are named. */
static void perf_dispatch_backlog(struct perf_sampler *ps, const struct perf_callbacks *cb,
				  void *ctx, int *nsamples)
{
	size_t todo = ps->backlog.bytes;
	const struct perf_event_header *h;
	while (todo && (h = backlog_front(&ps->backlog))) {
		todo -= h->size < todo ? h->size : todo;
		perf_dispatch(ps, h, cb, ctx, nsamples);
		backlog_pop(&ps->backlog);
		if (clock_ns(CLOCK_MONOTONIC) - ps->last_stash_ns >= PERF_STASH_EVERY_NS)
			perf_stash(ps);
	}
}

/* Every record of one ring through perf_dispatch. */
static void perf_drain_one(struct perf_sampler *ps, struct ring *r, const struct perf_callbacks *cb,
			   void *ctx, int *nsamples)
{
	const struct perf_event_header *h;
	uint64_t before = r->corrupt;
	while (ring_next(r, &h) == 1)
		perf_dispatch(ps, h, cb, ctx, nsamples);
	ps->stats.corrupt += r->corrupt - before;
}

static int perf_task_cmp(const void *a, const void *b)
{
	const struct perf_task_rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (int)y->fork - (int)x->fork; /* a FORK before an EXIT at the same time */
}

/* The FORK and EXIT records of a drain, oldest first: inherit mode keeps
 * its table of covered threads (a FORK covers the child; an EXIT ends a
 * thread, and its events once nothing inherited them); then the callbacks. */
static void perf_task_apply(struct perf_sampler *ps, bool track, const struct perf_callbacks *cb,
			    void *ctx)
{
	if (ps->ntask > 1)
		qsort(ps->task, ps->ntask, sizeof(*ps->task), perf_task_cmp);
	for (size_t i = 0; i < ps->ntask; i++) {
		const struct perf_task_rec *r = &ps->task[i];
		if (r->fork) {
			if (track)
				perf_note_fork(ps, r);
			if (cb->thread_new)
				cb->thread_new(ctx, r->pid, r->tid);
		} else {
			if (track)
				perf_remove_thread(ps, r->tid);
			if (cb->thread_exit)
				cb->thread_exit(ctx, r->pid, r->tid);
		}
	}
	ps->ntask = 0;
}

int perf_drain(struct perf_sampler *ps, const struct perf_callbacks *cb, void *ctx)
{
	int nsamples = 0;
	/* Read every ring before naming any sample: naming is the slow part. */
	perf_stash(ps);
	perf_dispatch_backlog(ps, cb, ctx, &nsamples);
	if (ps->per_thread) {
		perf_task_apply(ps, false, cb, ctx);
		return nsamples;
	}
	perf_task_apply(ps, true, cb, ctx);
	perf_resolve_pending(ps);
	perf_sweep(ps);
	return nsamples;
}

int perf_nrings(const struct perf_sampler *ps)
{
	int n = 0;
	if (ps->per_thread) {
		for (int i = 0; i < ps->nthreads; i++)
			n += ps->threads[i].state == PT_OPENED && ps->threads[i].ev->rb;
	} else {
		for (int i = 0; i < ps->ncpus; i++)
			n += ps->cpu_rb[i].fd >= 0;
	}
	return n;
}

int perf_drain_ring(struct ring *r, bool kernel, const struct perf_callbacks *cb, void *ctx,
		    struct perf_stats *stats)
{
	struct perf_sampler ps = {.clk.kernel = kernel, .per_thread = true, .stats = *stats};
	int nsamples = 0;
	perf_drain_one(&ps, r, cb, ctx, &nsamples);
	perf_task_apply(&ps, false, cb, ctx);
	free(ps.task);
	*stats = ps.stats;
	return nsamples;
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
		snprintf(
		    buf, size,
		    "could not map the sample buffer for process %d (locked-memory limit): run "
		    "as root or raise 'ulimit -l'.",
		    pid);
	else if (err == -EMFILE || err == -ENFILE)
		snprintf(buf, size, "out of file descriptors (one per thread): raise 'ulimit -n'.");
	else if (err == -ENOSYS || err == -ENOENT || err == -EOPNOTSUPP)
		snprintf(buf, size,
			 "this kernel has no cpu-clock perf event (perf_event_open: %s).",
			 strerror(-err));
	else
		snprintf(buf, size, "cannot sample process %d: %s.", pid, strerror(-err));
}
