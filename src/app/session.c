/*
 * session — one profiling run put together (see session.h).
 *
 * main picks nothing here but the source: the wall sampler for --mode wall,
 * perf otherwise, a saved profile for `report`. Whatever it is, it is
 * handed ingest's sink, and from then on a sample goes sampler → ingest →
 * frames → window without coming back to main or here.
 *
 * --subprocesses: procs finds the descendants on each refresh (and hands
 * their threads to the sampler, whatever the mode); here they are passed
 * on to ingest as they come and go, and ingest adopts the ones whose
 * samples arrive before procs found them.
 */
#include "stacktop/app/session.h"
#include "stacktop/lib/mono.h"
#include "stacktop/lib/pump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "stacktop/symbols/dbgfetch.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/model/ingest.h"
#include "stacktop/proc/funckind.h"
#include "stacktop/proc/locks.h"
#include "stacktop/proc/machine.h"
#include "stacktop/runtime/goheap.h"
#include "stacktop/runtime/hsperf.h"
#include "stacktop/memory/memhold.h"
#include "stacktop/memory/memtrace.h"
#include "stacktop/app/opts.h"
#include "stacktop/sample/perfsource.h"
#include "stacktop/formats/diffload.h"
#include "stacktop/formats/report.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/app/status.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/ui/view.h"
#include "stacktop/sample/wall.h"
#include "stacktop/model/window.h"

/* How often the rings are drained: every 50 ms, every 100 ms at
 * TICK_SLOW_MAX_HZ and below, where the wake-ups are most of what a quiet
 * TUI costs and the rings hold a second at the rate anyway. The memory
 * view's rings are sized for 50 ms (memtrace.c), and a CPython's stack
 * is read when its sample is named: both keep 50 ms (session_tick_ns). */
#define TICK_NS (50 * 1000 * 1000ull)
#define TICK_SLOW_NS (100 * 1000 * 1000ull)
#define TICK_SLOW_MAX_HZ 250
#define SEC_NS 1000000000ull

static void session_run_tick(struct session *s);
static void metrics_tick_now(struct session *s, uint64_t t);

/* The stages after the sampler: symbols, frames, the window (record keeps
 * everything: a day of 1 s buckets, so each sample's second is written),
 * ingest. */
static int open_stages(struct session *s, const struct opts *o, char *err, size_t errsz)
{
	bool record = o->cmd == OPTS_CMD_RECORD;
	int e;
	if ((e = sym_new(&s->sy)) || (e = frames_new(s->sy, &s->fr)) ||
	    (e = window_new(record ? 86400 : o->window_s, SEC_NS, s->fr, &s->w)) ||
	    (e = ingest_new(s->fr, s->w, &s->in))) {
		snprintf(err, errsz, "out of memory at start-up (%s).", strerror(-e));
		return e;
	}
	ingest_sink(s->in, &s->sink);
	if (o->debuginfod) {
		e = dbgfetch_new(o->debuginfod_urls, DBGFETCH_TIMEOUT_S, 0, &s->fetch);
		if (e == -EINVAL)
			snprintf(err, errsz,
				 "--debuginfod needs a server: give --debuginfod=URL or set "
				 "DEBUGINFOD_URLS.");
		else if (e)
			snprintf(err, errsz, "cannot start the debuginfod client: %s.",
				 strerror(-e));
		if (e)
			return e;
		sym_set_fetch(s->sy, s->fetch);
	}
	return 0;
}

/* The live sampler of the mode: ptrace (wall clock) or perf (on-CPU). */
static int open_sampler(struct session *s, struct opts *o, char *err, size_t errsz)
{
	int e;
	s->tick_most_ns = !o->wall && o->rate_hz <= TICK_SLOW_MAX_HZ ? TICK_SLOW_NS : TICK_NS;
	if (o->wall) {
		struct wall_config wc = {
		    .rate_hz = o->rate_given ? o->rate_hz : WALL_DEFAULT_RATE_HZ,
		    .stack_size = o->stack_size,
		};
		o->rate_hz = wc.rate_hz;
		e = wall_sampler_new(&wc, &s->smp);
	} else {
		struct perf_config pc = {
		    .rate_hz = o->rate_hz,
		    .stack_size = o->stack_size,
		    .drain_interval_s = s->tick_most_ns / 1e9,
		    .enable_on_exec = o->command != NULL,
		    .events = (enum perf_events)o->events,
		    .all = o->all,
		};
		e = perfsource_new(&pc, &s->smp);
	}
	if (e && o->all && (e == -EACCES || e == -EPERM))
		snprintf(err, errsz,
			 "sampling the whole machine needs root or CAP_PERFMON (%s); without "
			 "them, profile one of your own processes: stacktop -p PID, or stacktop "
			 "-- COMMAND.",
			 strerror(-e));
	else if (e)
		snprintf(err, errsz, "cannot start the %s sampler: %s.",
			 o->wall ? "wall-clock" : "perf", strerror(-e));
	s->period_s = 1.0 / o->rate_hz;
	return e;
}

/* The pump hook (lib/pump.h): slow loaders empty the sampler's kernel
 * buffers in between, so their first second drops no sample; and the
 * whole machine's fine steps keep their pace (they read /proc only, and
 * the first samples of every process on the box may take seconds to
 * load). */
static void session_pump(void *ctx)
{
	struct session *s = ctx;
	if (s->smp)
		sampler_pump(s->smp);
	if (s->machine)
		machine_fine(s->machine, mono_ns() / 1e9);
}

/* Launch the command: the sampler sets up before it execs. */
static int launch(struct session *s, const struct opts *o, char *err, size_t errsz)
{
	enum target_stdio io = o->batch ? TARGET_STDIO_STDERR : TARGET_STDIO_QUIET;
	int e = procs_spawn(&s->procs, o->command, io, err, errsz);
	if (e)
		return e;
	if ((e = sampler_launch_prepare(s->smp, s->procs.child.pid))) {
		sampler_explain(s->smp, e, s->procs.child.pid, err, errsz);
		procs_stop_child(&s->procs, 100);
		return e;
	}
	e = procs_go(&s->procs, o->command, err, errsz);
	sampler_launch_done(s->smp);
	return e;
}

/* A sampler holds descriptors per thread: take the hard limit of them. Not
 * before a launch, so the command starts with the limits it was given. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The hint of the stack a thread was seen waiting on a lock in most often
 * (wall mode: the window's [lock] leaves), walked from the leaf up. */
static enum locks_hint stack_hint(const struct window *w, uint32_t leaf)
{
	const struct frames *fr = window_frames(w);
	enum locks_hint h;

	for (uint32_t n = leaf; n != WINDOW_ROOT;) {
		const struct window_node *wn = window_node(w, n);
		const struct frame *f = wn ? frames_get(fr, wn->frame) : NULL;
		if (!wn)
			break;
		if (f && f->has_sym && (h = locks_hint_of_function(f->sym.func)) != LOCKS_HINT_NONE)
			return h;
		n = wn->parent;
	}
	return LOCKS_HINT_NONE;
}

/* Threads read per scan at most: each costs two small reads. */
#define LOCKS_SCAN_MAX 2048

/* One thread of a scan: its futex as read, and the window's stack for it. */
struct lock_scan {
	pid_t tid;
	int ti; /* index in metrics->threads */
	struct locks_raw raw;
	uint32_t leaf; /* parent of its most frequent [lock] leaf; WINDOW_ROOT: none */
	uint64_t best;
};

static int scan_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct lock_scan *)a)->tid, y = ((const struct lock_scan *)b)->tid;

	return x < y ? -1 : x > y;
}

/* The threads asleep in futex, with what their syscall file and memory
 * say; sorted by TID. A refused read is kept in s->locks.read_err. */
static int scan_read(struct session *s, struct lock_scan *sc)
{
	struct metrics *m = &s->metrics;
	int n = 0, e;

	for (int i = 0; i < m->nthreads && n < LOCKS_SCAN_MAX; i++) {
		struct metrics_thread *t = &m->threads[i];
		/* Without its wchan (no view shows it), a thread whose syscall
		 * was no futex wait is looked at again once metrics read it
		 * again (it moved, or its turn came). */
		if (!t->alive || t->state != 'S' || (t->wchan[0] && !strstr(t->wchan, "futex")) ||
		    (!t->wchan[0] && t->nofutex_t >= t->read_t))
			continue;
		if ((e = locks_read_raw(t->pid, t->tid, &sc[n].raw)) == -ENOENT) {
			t->nofutex_t = t->read_t;
			continue;
		}
		if (e == -ESRCH)
			continue;
		if (e || sc[n].raw.mem_err) {
			s->locks.read_err = e ? e : sc[n].raw.mem_err;
			s->locks.read_err_pid = t->pid;
			if (e)
				continue;
		}
		sc[n].tid = t->tid;
		sc[n].ti = i;
		sc[n].leaf = WINDOW_ROOT;
		sc[n].best = 0;
		n++;
	}
	qsort(sc, (size_t)n, sizeof(*sc), scan_cmp);
	return n;
}

/* Wall mode: each thread's most frequent stack that ended waiting on a lock,
 * one pass over the window's counts. */
static void scan_stacks(const struct window *w, struct lock_scan *sc, int n)
{
	size_t nc = 0;
	const struct window_count *wc = w && n ? window_counts(w, &nc) : NULL;

	for (size_t k = 0; k < nc; k++) {
		struct lock_scan key = {.tid = wc[k].tid}, *hit;
		const struct window_node *wn = window_node(w, wc[k].node);
		const struct frame *f = wn ? frames_get(window_frames(w), wn->frame) : NULL;
		if (!f || f->wait != SAMPLE_WAIT_LOCK ||
		    !(hit = bsearch(&key, sc, (size_t)n, sizeof(*sc), scan_cmp)) ||
		    wc[k].count <= hit->best)
			continue;
		hit->best = wc[k].count;
		hit->leaf = wn->parent;
	}
}

/* Once a second: what each thread asleep in futex waits on and who holds
 * it, then the cycles. Only reads: /proc/PID/task/TID/syscall and the
 * target's memory (ptrace-read permission), nothing is stopped. */
static void scan_locks(struct session *s)
{
	static struct lock_scan sc[LOCKS_SCAN_MAX];
	const struct metrics *m = &s->metrics;
	struct locks_wait w;
	int n;

	locks_reset(&s->locks);
	n = scan_read(s, sc);
	scan_stacks(s->w, sc, n);
	for (int j = 0; j < n; j++) {
		const struct metrics_thread *t = &m->threads[sc[j].ti];
		enum locks_hint h =
		    sc[j].leaf != WINDOW_ROOT ? stack_hint(s->w, sc[j].leaf) : LOCKS_HINT_NONE;
		/* The window's stack may be an older wait than the one read now:
		 * a mutex is told by its futex call alone, so that hint is not
		 * needed, and taken from a stale stack it could make a condition
		 * variable's neighbour an owner. */
		if (h == LOCKS_HINT_MUTEX)
			h = LOCKS_HINT_NONE;
		locks_resolve(&sc[j].raw, t->pid, t->tid, h, &w);
		locks_add(&s->locks, &w);
	}
	locks_build(&s->locks);
	/* Who held the locks, over about the window (one scan a second). */
	unsigned win = m->cfg.window_s ? m->cfg.window_s : 60;
	locks_tally(&s->locks, 1.0 - 1.0 / (double)win);
}

/* The samples of tid in the window: a count that moves when it ran
 * (metrics reads a quiet thread's procfs files only then or in turn). */
static uint64_t samples_of(void *ctx, pid_t tid)
{
	return window_thread_total(((struct session *)ctx)->w, tid);
}

/* Every process profiled (targets still there, descendants followed)
 * becomes the set metrics reads. */
static void metrics_follow(struct session *s)
{
	static pid_t pids[PROCS_MAX + PROCS_CHILDREN_MAX];
	const struct procs *ps = &s->procs;
	int n = 0;

	for (int i = 0; i < ps->n; i++)
		if (!ps->p[i].gone)
			pids[n++] = ps->p[i].pid;
	for (int i = 0; i < ps->nkids && n < (int)(sizeof(pids) / sizeof(pids[0])); i++)
		pids[n++] = ps->kids[i].pid;
	metrics_set_pids(&s->metrics, pids, n);
}

/* Descendants procs found or lost since the last refresh, into ingest. */
static void take_children(struct session *s)
{
	pid_t pids[256];
	int n;
	while ((n = procs_take_new(&s->procs, pids, 256)) > 0)
		for (int i = 0; i < n; i++)
			ingest_add_process(s->in, pids[i]);
	while ((n = procs_take_ended(&s->procs, pids, 256)) > 0)
		for (int i = 0; i < n; i++)
			ingest_process_exited(s->in, pids[i]);
}

/* The metrics as the run starts: the first target's, or (the whole
 * machine) the box's until a process is narrowed to. */
static void open_metrics(struct session *s, pid_t pid)
{
	struct metrics_config mc;

	metrics_config_default(&mc);
	mc.window_s = s->o->window_s;
	mc.spike_for_s = s->o->spike_for_s;
	s->metrics_ok = metrics_init(&s->metrics, pid, &mc) == 0;
	if (s->metrics_ok && spikes_new(&s->spikes))
		s->spikes = NULL; /* no risers named: the rhythm stands alone */
	if (s->metrics_ok) {
		metrics_set_samples(&s->metrics, samples_of, s);
		s->metrics_open_ns = mono_ns();
		metrics_tick_now(s, s->metrics_open_ns);
	}
	s->next_metrics_ns = mono_ns() + SEC_NS;
	health_init(&s->health, mono_ns());
}

/* The whole machine: no process to attach; ingest adopts every process
 * from its first sample under a root frame of its own; the process table
 * reads /proc within its budget. */
static int open_machine(struct session *s, char *err, size_t errsz)
{
	struct machine_config mc;
	int e;

	machine_config_default(&mc); /* its budgets; the history is the window */
	mc.history_s = s->o->window_s < MACHINE_MIN_S ? MACHINE_MIN_S : s->o->window_s;

	if ((e = machine_new(&mc, &s->machine)) || (e = series_init(&s->box_cpu, mc.history_s)) ||
	    (e = series_init(&s->box_mem, mc.history_s))) {
		snprintf(err, errsz, "out of memory at start-up (%s).", strerror(-e));
		return e;
	}
	raise_nofile();
	/* Never ask the box's JVMs for their perf maps: a look at the whole
	 * machine acts on no process (maps they wrote are read all the same;
	 * -p PID asks one). */
	jitwatch_init(&s->jit, false);
	ingest_follow(s->in, true);
	ingest_process_roots(s->in, true);
	open_metrics(s, 0);
	return 0;
}

int session_open_live(struct session *s, struct opts *o, char *err, size_t errsz)
{
	int e;
	s->o = o;
	if ((e = open_sampler(s, o, err, errsz)) || (e = open_stages(s, o, err, errsz)))
		return e;
	pump_set(session_pump, s);
	if (o->all)
		return open_machine(s, err, errsz);
	e = o->command ? launch(s, o, err, errsz)
		       : procs_attach(&s->procs, o->pids, o->npids, err, errsz);
	if (e)
		return e;
	raise_nofile();
	jitwatch_init(&s->jit, !o->no_runtime_attach);
	procs_follow(&s->procs, o->subprocesses);
	ingest_follow(s->in, o->subprocesses);
	e = procs_scan(&s->procs, s->smp);
	if (sampler_nthreads(s->smp) == 0) {
		e = e ? e : -ESRCH;
		sampler_explain(s->smp, e, s->procs.p[0].pid, err, errsz);
		return e;
	}
	for (int i = 0; i < s->procs.n; i++)
		ingest_add_process(s->in, s->procs.p[i].pid);
	take_children(s);
	open_metrics(s, s->procs.p[0].pid);
	return 0;
}

/* A recorded file's per-second CPU (record keeps it): its series, so the
 * alerts line carries the rhythm offline. Without it: no metrics, as
 * before. */
static void report_metrics(struct session *s, const struct opts *o)
{
	struct metrics_config mc;
	size_t n;
	const double *cpu = stackset_cpu(s->report, &n);

	if (!n)
		return;
	metrics_config_default(&mc);
	mc.window_s = o->window_s;
	if (metrics_init(&s->metrics, 0, &mc))
		return;
	for (size_t i = 0; i < n; i++)
		metrics_push_cpu(&s->metrics, (double)(i + 1), cpu[i]);
	metrics_eval(&s->metrics, (double)n);
	s->metrics.exited = true;
	s->metrics_ok = true;
	/* What rises in the spikes, when the file says where its CPU sits
	 * among its seconds; out of memory, the rhythm alone. */
	diffload_risers(s->report, s->fr, &s->metrics);
}

int session_open_report(struct session *s, struct opts *o, char *err, size_t errsz)
{
	char n[32];
	int e;
	s->o = o;
	if ((e = open_stages(s, o, err, errsz)) ||
	    (e = report_load(o->report_file, s->fr, &s->report, err, errsz)))
		return e;
	if ((e = report_sampler_new(s->report, &s->smp))) {
		snprintf(err, errsz, "out of memory at start-up (%s).", strerror(-e));
		return e;
	}
	sampler_collect(s->smp, REPORT_TIME_NS, &s->sink);
	const char *mode = stackset_mode(s->report);
	s->period_s = stackset_period_s(s->report);
	o->wall = mode && !strcmp(mode, "wall");
	o->rate_hz = s->period_s > 0 ? (unsigned)(1.0 / s->period_s + 0.5) : 0;
	/* One pseudo process named after the file, gone: nothing to sample. */
	s->procs.n = 1;
	snprintf(s->procs.p[0].cmdline, sizeof(s->procs.p[0].cmdline), "%s", o->report_file);
	s->procs.nthreads = (int)stackset_nthreads(s->report);
	s->procs.exited = true;
	text_count(stackset_samples(s->report), n, sizeof(n));
	snprintf(s->procs.exit_text, sizeof(s->procs.exit_text), "saved %s profile, %s samples",
		 mode ? mode : "cpu", n);
	report_metrics(s, o);
	health_init(&s->health, mono_ns());
	return 0;
}

void session_want_wchan(struct session *s, bool on)
{
	if (s->metrics_ok)
		metrics_want_wchan(&s->metrics, on);
}

uint64_t session_tick_ns(const struct session *s)
{
	uint64_t t = sampler_tick_ns(s->smp), most = s->tick_most_ns ? s->tick_most_ns : TICK_NS;
	/* The slow pace is for native code: a CPython's stack is read when
	 * its sample is named, and the longer a sample waits in the ring the
	 * more often that stack has moved on (beside seven other tests at
	 * 100 ms, 24 of 51 samples of a -X perf target went unmatched, and
	 * test_python read leaf_sixty at 39% of the leaves where 60 is right,
	 * its time credited to the leaf after it): from the attach on, while
	 * one is profiled. */
	if ((s->memtrace || (s->in && ingest_any_python(s->in))) && most > TICK_NS)
		most = TICK_NS;
	return t && t < most ? t : most;
}

/* One metrics tick at t (ns): the processes followed, one point of every
 * series, the run's figures and the locks. */
/* A managed runtime whose heap stacktop does not read, by its executable's
 * name (java: one run with -XX:-UsePerfData), else NULL. */
static const char *runtime_unread(pid_t pid)
{
	char link[64], exe[256];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	base = text_basename(exe);
	if (!strcmp(base, "node") || !strcmp(base, "nodejs"))
		return "node";
	if (!strncmp(base, "python", 6))
		return "Python";
	if (!strcmp(base, "java"))
		return "Java";
	return NULL;
}

/* pid's runtime heap into *hp: a Go program's from its memory (goheap,
 * opened once a pid; asked again while it is not Go: a child not yet
 * exec'd), else a JVM's from its hsperfdata. *name: whose; *why: why not,
 * when stacktop knows. */
static int heap_read(struct session *s, pid_t pid, struct hsperf *hp, const char **name,
		     const char **why)
{
	struct goheap_figures gf;
	int rc;

	if (s->goheap_pid != pid || (!s->goheap && s->goheap_rc == -ENOENT)) {
		goheap_free(s->goheap);
		s->goheap_pid = pid;
		s->goheap_rc = goheap_open(pid, &s->goheap);
	}
	*name = s->goheap || s->goheap_rc != -ENOENT ? "Go" : "Java";
	if (s->goheap_rc == -ENODATA)
		*why = "stripped: no symbols";
	if (!s->goheap)
		return s->goheap_rc == -ENOENT ? hsperf_read(pid, hp) : s->goheap_rc;
	if ((rc = goheap_read(s->goheap, &gf)))
		return rc;
	*hp = (struct hsperf){gf.heap_used, gf.heap_committed, gf.gc_count, gf.gc_pause_s};
	return 0;
}

/* A runtime's own heap beside its RSS (a JVM's hsperfdata, a Go
 * program's memory; no attach): every second while read; a process
 * without one is asked again every second for its first 20 misses (a JVM
 * just launched), then every 10 s. */
static void runtime_heap(struct session *s, uint64_t t)
{
	struct metrics *m = &s->metrics;
	const char *name = NULL, *why = NULL;
	struct hsperf hp;

	pid_t pid = session_pid(s);

	if (s->report || t < s->hsperf_next_ns || !pid)
		return;
	if (heap_read(s, pid, &hp, &name, &why)) {
		/* a JVM just started maps its file within a second or two */
		m->rt_heap = false;
		m->rt_unread = why ? name : runtime_unread(pid);
		m->rt_unread_why = why;
		s->hsperf_next_ns = t + (++s->hsperf_misses < 20 ? SEC_NS : 10 * SEC_NS);
		return;
	}
	s->hsperf_misses = 0;
	if (!m->rt_heap && !m->rt_heap_committed0) {
		m->rt_heap_committed0 = hp.heap_committed;
		m->rt_rss0 = m->mem_now;
	}
	m->rt_heap = true;
	m->rt_name = name;
	m->rt_heap_used = hp.heap_used;
	m->rt_heap_committed = hp.heap_committed;
	m->rt_gc_count = hp.gc_count;
	m->rt_gc_time_s = hp.gc_time_s;
	s->hsperf_next_ns = t + SEC_NS;
}

/* The whole machine's second: the process table read (the processes
 * sampled since the last tick first), the box's point; the metrics are
 * the box's, or the narrowed process's read from procfs. */
static int box_tick(struct session *s, double t)
{
	static pid_t pids[INGEST_PROCS_MAX];
	struct machine_totals tot;
	size_t n = ingest_take_sampled(s->in, pids, INGEST_PROCS_MAX);

	machine_set_sampled(s->machine, pids, n);
	machine_tick(s->machine, t);
	machine_get_totals(s->machine, &tot);
	series_push(&s->box_cpu, t, tot.cpu_pct);
	series_push(&s->box_mem, t, (double)tot.mem_used);
	if (s->narrow) {
		metrics_set_pids(&s->metrics, &s->narrow, 1);
		return metrics_tick(&s->metrics, t);
	}
	s->metrics.box = true;
	s->metrics.mem_limit = tot.mem_total;
	s->metrics.mem_limit_src = "RAM";
	s->metrics.limit_t = t; /* not looked up for a process */
	metrics_push_process(&s->metrics, t, tot.cpu_pct, tot.mem_used, 0, 0);
	metrics_eval(&s->metrics, t);
	return 0;
}

static void metrics_tick_now(struct session *s, uint64_t t)
{
	if (!s->procs.exited) {
		struct sampler_stats st;
		int rc;
		sampler_stats(s->smp, &st);
		metrics_set_forks(&s->metrics, st.forks_known, st.forks);
		if (s->machine) {
			rc = box_tick(s, t / 1e9);
		} else {
			metrics_follow(s);
			rc = metrics_tick(&s->metrics, t / 1e9);
		}
		if (rc == 0) {
			if (s->spikes)
				spikes_tick(s->spikes, s->w, &s->metrics, t / 1e9);
			session_run_tick(s);
			scan_locks(s);
			runtime_heap(s, t);
		}
	}
	s->metrics.exited = s->procs.exited;
}

/* After a metrics tick: what the run's summary needs. */
static void session_run_tick(struct session *s)
{
	const struct metrics *m = &s->metrics;

	/* CPU seconds of every process profiled, from the CPU of each
	 * interval: processes come and go, so no one counter covers them. */
	if (m->cpu_now < 0)
		return;
	if (s->run.started)
		s->run.cpu_s += m->cpu_now / 100 * (m->last_t - s->run.t_last);
	s->run.started = true;
	s->run.t_last = m->last_t;
	if (m->cpu_now > s->run.peak_cpu)
		s->run.peak_cpu = m->cpu_now;
	if (m->mem_now > s->run.peak_rss)
		s->run.peak_rss = m->mem_now;
}

/* One value a second on the grid of whole seconds, so that the file's
 * cpu_1s_at places every one (a tick late after a stall would shift all
 * before it): the point at t covers (t - 1, t], most of the second from
 * floor(t - 0.5); a second without its own point takes the one before
 * (the first point for the first seconds), of two the later counts. */
size_t session_cpu(const struct session *s, double *v, size_t max, double *t_last)
{
	static double tt[METRICS_LONG_S], vv[METRICS_LONG_S];
	size_t n = s->metrics_ok ? series_get(&s->metrics.cpu_long, tt, vv, METRICS_LONG_S) : 0;

	*t_last = 0;
	if (!n || !max)
		return 0;
	double last = floor(tt[n - 1] - 0.5), span = last - floor(tt[0] - 0.5) + 1;
	size_t m = span < (double)max ? (size_t)span : max, j = n;
	for (size_t i = m; i-- > 0;) {
		double b = last - (double)(m - 1 - i);
		while (j > 1 && floor(tt[j - 1] - 0.5) > b)
			j--;
		v[i] = vv[j - 1];
	}
	*t_last = tt[n - 1];
	return m;
}

void session_summary(const struct session *s, double wall_s, struct summary *out)
{
	*out = (struct summary){.wall_s = wall_s};
	if (!s->run.started)
		return;
	out->cpu_s = s->run.cpu_s;
	out->avg_cpu = wall_s > 0 ? 100 * out->cpu_s / wall_s : 0;
	out->peak_cpu = s->run.peak_cpu;
	out->peak_rss = s->run.peak_rss;
}

pid_t session_pid(const struct session *s)
{
	if (s->machine)
		return s->narrow;
	return s->procs.n ? s->procs.p[0].pid : 0;
}

/* Memory attribution of the process narrowed from. */
static void memory_stop(struct session *s)
{
	if (!s->memory_on)
		return;
	memtrace_free(s->memtrace);
	s->memtrace = NULL;
	memmap_free(&s->memmap);
	s->memory_on = false;
	s->memtrace_err[0] = '\0';
}

/* The metrics start from what was kept: the process table's CPU and RSS
 * of pid a second, or the box's. */
static void narrow_prefill(struct session *s, pid_t pid)
{
	const struct machine_proc *p = pid ? machine_find(s->machine, pid) : NULL;
	const struct series *sc = p ? &p->cpu : &s->box_cpu, *sm = p ? &p->rss_series : &s->box_mem;
	double *t, *cpu, *mem;
	size_t n, nm;

	if (pid && !p)
		return;
	t = malloc((sc->len + 1) * sizeof(*t));
	cpu = malloc((sc->len + 1) * sizeof(*cpu));
	mem = malloc((sm->len + 1) * sizeof(*mem));
	n = t && cpu && mem ? series_get(sc, t, cpu, sc->len) : 0;
	nm = n ? series_get(sm, NULL, mem, sm->len) : 0;
	/* A process's first reading gives an RSS but no CPU point: the two
	 * end at the same tick, so they are matched from the newest. */
	for (size_t i = n > nm ? n - nm : 0; nm && i < n; i++)
		metrics_push_process(&s->metrics, t[i], cpu[i], (uint64_t)mem[nm - (n - i)], 0, 0);
	if (n && nm)
		metrics_eval(&s->metrics, t[n - 1]);
	free(t);
	free(cpu);
	free(mem);
}

void session_narrow(struct session *s, pid_t pid)
{
	struct metrics_config mc;

	if (!s->machine || pid == s->narrow)
		return;
	mc = s->metrics.cfg;
	memory_stop(s);
	if (s->metrics_ok)
		metrics_free(&s->metrics);
	spikes_free(s->spikes);
	s->spikes = NULL;
	s->narrow = pid;
	s->hsperf_next_ns = 0;
	s->hsperf_misses = 0;
	s->metrics_ok = metrics_init(&s->metrics, pid, &mc) == 0;
	if (!s->metrics_ok)
		return;
	if (spikes_new(&s->spikes))
		s->spikes = NULL;
	metrics_set_samples(&s->metrics, samples_of, s);
	narrow_prefill(s, pid);
}

void session_memory_start(struct session *s)
{
	pid_t pid = session_pid(s);

	if (s->memory_on || s->report || !pid)
		return;
	s->memory_on = true;
	s->memory_since_ns = mono_ns();
	memmap_init(&s->memmap, pid, SEC_NS);
	memmap_tick(&s->memmap, s->memory_since_ns);
	struct memtrace_config mc = {
	    .pid = pid,
	    .stack_size = s->o->stack_size,
	    .window_ns = (uint64_t)s->o->window_s * SEC_NS,
	};
	if (memtrace_new(&mc, s->in, s->fr, &s->memtrace, s->memtrace_err, sizeof(s->memtrace_err)))
		s->memtrace = NULL;
}

void session_collect(struct session *s, uint64_t now_ns)
{
	/* Busy is CPU time: on a saturated box the wall time of this work
	 * includes waiting for a CPU, which a lower rate would not cure. */
	uint64_t cpu0 = mono_thread_cpu_ns();
	if (!s->procs.exited)
		sampler_collect(s->smp, now_ns, &s->sink);
	if (s->memtrace && !s->procs.exited)
		memtrace_collect(s->memtrace, now_ns);
	jitwatch_tick(&s->jit, now_ns);
	uint64_t t = mono_ns(), cpu1 = mono_thread_cpu_ns();
	health_busy(&s->health, cpu1 > cpu0 ? cpu1 - cpu0 : 0);
	/* Every ~100 ms: the process CPU in fine steps (busy floor). */
	if (s->metrics_ok && !s->procs.exited && (!s->machine || s->narrow))
		metrics_fine(&s->metrics, t / 1e9);
	/* The whole machine's floor candidates in fine steps (machine_fine
	 * keeps their pace), before the second's tick. */
	if (s->machine)
		machine_fine(s->machine, t / 1e9);
	/* Once a second: one point of every series (CPU, memory, threads). */
	if (!s->metrics_ok || t < s->next_metrics_ns)
		return;
	metrics_tick_now(s, t);
	s->next_metrics_ns += SEC_NS;
	if (s->next_metrics_ns < t)
		s->next_metrics_ns = t + SEC_NS;
}

/* The first frame comes before the second metrics tick when --delay is
 * under a second: then measure over what has elapsed since start-up (its
 * tick), so the frame shows the CPU and memory of that span, not 0. Under
 * METRICS_FIRST_MIN_NS a CPU figure is mostly clock granularity (10 ms
 * ticks): the views say "measuring" instead. The seconds after keep their
 * one-second cadence from here. */
#define METRICS_FIRST_MIN_NS 200000000ull

static void measure_first(struct session *s)
{
	uint64_t t = mono_ns();

	if (!s->metrics_ok || s->procs.exited || s->metrics.cpu.len ||
	    t < s->metrics_open_ns + METRICS_FIRST_MIN_NS)
		return;
	metrics_tick_now(s, t);
	s->next_metrics_ns = t + SEC_NS;
}

/* Threads that appeared, processes that ended or exec'd. */
static void follow_targets(struct session *s)
{
	uint64_t execs = ingest_get_stats(s->in)->execs;
	procs_scan(&s->procs, s->smp);
	/* Samples still in the rings belong to the end: take them. */
	if (procs_check_exit(&s->procs))
		sampler_collect(s->smp, mono_ns(), &s->sink);
	if (execs != s->execs_seen) {
		s->execs_seen = execs;
		procs_reread_cmdlines(&s->procs);
	}
	take_children(s);
	ingest_refresh(s->in);
}

void session_refresh(struct session *s, uint64_t now_ns, bool first)
{
	struct sampler_stats st;
	if (s->machine)
		ingest_refresh(s->in);
	else if (!s->procs.exited)
		follow_targets(s);
	if (s->report)
		return; /* a loaded profile does not age, and has nothing to measure */
	/* debug files fetched since the last refresh: name what had no name */
	if (s->fetch && sym_fetched(s->sy) >= 0)
		frames_renamed(s->fr);
	window_advance(s->w, now_ns);
	/* before the window is shown or written: a JVM's new map names its
	 * JIT frames (also the map a launched JVM wrote as it exited) */
	jitwatch_refresh(&s->jit, s->w, s->fr, s->sy, now_ns);
	measure_first(s);
	/* Memory climbing like stairs: find who holds it (the MEM alert
	 * names the top holder). */
	if (s->metrics_ok && (s->metrics.alert_stairs || s->metrics.mem_rising))
		session_memory_start(s);
	if (s->memory_on && !s->procs.exited) {
		/* A new snapshot of the mappings: regions whose munmap record
		 * was lost are not in it any more. */
		if (memmap_tick(&s->memmap, now_ns) == 1 && s->memtrace)
			memhold_reconcile(memtrace_hold(s->memtrace),
					  (const uint64_t(*)[2])s->memmap.ranges, s->memmap.nranges,
					  s->memmap.read_ns);
		if (s->memtrace)
			memtrace_refresh(s->memtrace, now_ns);
	}
	sampler_stats(s->smp, &st);
	struct health_input in = {
	    .samples = ingest_get_stats(s->in)->weight, /* in periods of the rate, as the window */
	    .lost = st.lost,
	    .expected_hz = s->metrics_ok ? s->o->rate_hz * s->metrics.cpu_now / 100.0 : 0,
	    .tracer = procs_tracer(&s->procs),
	    .kernel_denied = st.kernel_denied,
	    .misses_short_threads = st.misses_short_threads,
	    .first = first,
	};
	health_measure(&s->health, &in, now_ns);
}

uint64_t session_now(const struct session *s)
{
	return s->report ? report_now_ns(s->report, s->w) : mono_ns();
}

static int tid_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* Samples on the CPU in the window that are garbage collection (by their
 * frames, or their thread's name: funckind), and all on the CPU. */
static uint64_t session_gc(const struct session *s, uint64_t *running)
{
	int tids[256];
	size_t n = 0;

	for (int i = 0; s->metrics_ok && i < s->metrics.nthreads && n < 256; i++)
		if (funckind_gc_thread(s->metrics.threads[i].comm))
			tids[n++] = s->metrics.threads[i].tid;
	if (n > 1)
		qsort(tids, n, sizeof(*tids), tid_cmp);
	return window_gc_counts(s->w, n ? tids : NULL, n, running);
}

void session_header(struct session *s, struct view_header *h)
{
	static int pids[PROCS_MAX];
	uint64_t now = session_now(s);
	struct status_in in = {
	    .procs = &s->procs,
	    .sampled_threads = sampler_nthreads(s->smp),
	    .ingest = ingest_get_stats(s->in),
	    .mode = s->o->wall ? "wall" : "cpu",
	    .rate_hz = s->o->rate_hz,
	    .window_s = s->o->window_s,
	    .cpu_now = s->metrics_ok ? s->metrics.cpu_now : -1,
	    .window_samples = window_total(s->w),
	    .span_s = window_span_s(s->w, now),
	    .source = s->report ? s->o->report_file : NULL,
	    .source_samples = s->report ? stackset_samples(s->report) : 0,
	    .jit_nomap_pid = (int)sym_jit_nomap(s->sy),
	};
	struct tfile_stats ts;
	tfile_stats_get(&ts);
	for (int r = 0; r < TFILE_R_COUNT; r++)
		in.files_refused += ts.refused[r];
	sampler_stats(s->smp, &in.sampler);
	in.health = &s->health;
	struct dbgfetch_stats ds;
	if (s->fetch) {
		dbgfetch_stats(s->fetch, &ds);
		in.dbg = &ds;
	}
	in.gc_samples = session_gc(s, &in.gc_running);
	status_header(&in, pids, h);
	h->ngil = ingest_python_state(s->in, h->gil_tids, VIEW_GIL_MAX, &h->py_gc);
	/* A saved profile's span is what the file says (0: not recorded). */
	if (s->report)
		h->span_s = stackset_duration_s(s->report);
	else
		jitwatch_header(&s->jit, now, h);
}

void session_counts(const struct session *s, uint64_t *samples, uint64_t *lost)
{
	struct sampler_stats st;
	sampler_stats(s->smp, &st);
	*samples = ingest_get_stats(s->in)->samples;
	*lost = st.lost;
}

void session_stop(struct session *s)
{
	/* First: detach every thread, so none is left stopped or traced, and
	 * a launched command can take its SIGTERM. */
	if (s->smp)
		sampler_stop(s->smp);
	procs_stop_child(&s->procs, 500);
	jitwatch_free(&s->jit); /* a request in flight: its child killed */
}

void session_close(struct session *s)
{
	pump_set(NULL, NULL);
	session_stop(s);
	sampler_free(s->smp);
	memtrace_free(s->memtrace); /* before frames: it holds references */
	if (s->memory_on)
		memmap_free(&s->memmap);
	ingest_free(s->in);
	spikes_free(s->spikes);
	if (s->metrics_ok)
		metrics_free(&s->metrics);
	locks_free(&s->locks);
	goheap_free(s->goheap);
	machine_free(s->machine);
	series_free(&s->box_cpu);
	series_free(&s->box_mem);
	window_free(s->w);
	stackset_free(s->report);
	procs_free(&s->procs);
	frames_free(s->fr); /* after the window: it holds references */
	sym_free(s->sy);
	dbgfetch_free(s->fetch); /* never waits for a transfer in flight */
	memset(s, 0, sizeof(*s));
}
