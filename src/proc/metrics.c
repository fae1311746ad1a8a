/*
 * metrics — per-second procfs readings of the target processes and their
 * threads, and what they mean: floor, baseline, peak, memory trend, time to
 * the limit, thread flags and the alerts (see metrics.h for the
 * definitions).
 *
 * Contract: metrics_init allocates the series (one point a second for
 * cfg.window_s seconds); metrics_free releases them and every thread.
 * metrics_tick reads procfs and pushes; metrics_push_* push synthetic
 * points for tests; metrics_eval recomputes every reading from the series
 * alone. Pointers returned by metrics_thread are valid until the next
 * call that may add or drop a thread (metrics_tick, metrics_thread with
 * create, metrics_push_thread, metrics_eval).
 *
 * CPU%: /proc/PID/stat utime+stime counts clock ticks (USER_HZ, usually
 * 100), so one reading a second is quantised to 1%; the process total
 * includes threads that already exited (proc(5), "utime"), which is why the
 * process CPU comes from the process line and not from summing threads.
 * The first tick only records the counters: a rate needs two readings.
 * Several processes: the CPU and memory points are the sums over the
 * processes read at this tick. A child's CPU moves into its parent's
 * cutime/cstime when it is reaped, never into utime/stime, so following a
 * tree counts nothing twice.
 *
 * Memory: RSS = RssAnon + RssFile + RssShmem (/proc/PID/status, Linux 4.5+).
 * The cgroup limit is re-read every 30 s (it can be changed at run time).
 * A zombie process has no memory lines; the last values are kept.
 *
 * Cost: a tick reads only the tracked processes' own files — per process
 * stat and status, per thread stat, wchan (when not running) and children
 * (whose zombies are the only other processes read). Past METRICS_ROTATE
 * threads, a quiet thread (asleep at its last read, idle over the window,
 * not sampled since the last tick: metrics_set_samples) is read only in
 * its turn, METRICS_ROTATE a tick, and counts 0% meanwhile (its next read
 * charges what it used since to that second); a thread's children file is
 * read with its stat, and every tick while it has a zombie. So a tick of
 * 10,000 sleepers reads ~800 files, not 30,000; the task directory is
 * still listed whole, so every thread is counted and kept alive. The files stay open
 * and are read again with pread (procstat_file), the task directory is
 * rewound, not reopened, so a tick of a 6-thread process is ~15 reads and
 * no open. Past the keep-open budgets (keep_open threads,
 * keep_open_procs processes) files are opened and closed each tick. A
 * process or thread only moves to a lower index (the tables are compacted,
 * never reordered), so one that kept its files keeps them while it is
 * tracked and the budget holds.
 */
#include "stacktop/proc/metrics.h"
#include "stacktop/proc/waits.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "stacktop/lib/array.h"
#include "stacktop/proc/procstat.h"
#include "stacktop/lib/text.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)
#define LIMIT_REREAD_S 30.0
#define BASELINE_NOW_S 10.0
#define STAIRS_MIN_SPAN_S 30.0 /* seconds of climb before a leak is suspected */
#define MIN_TREND_POINTS METRICS_TREND_MIN_S

void metrics_config_default(struct metrics_config *c)
{
	*c = (struct metrics_config){.window_s = 60,
				     .busy_floor_pct = 5,
				     .spike_factor = 2,
				     .spike_for_s = 30,
				     .stuck_s = 5,
				     .baseline_period_s = 60};
}

/* Threads whose three files may stay open: an eighth of what the open-file
 * limit leaves past 256 (so 64 gives none, 1024 gives 96), at most
 * METRICS_KEEP_OPEN. */
static int keep_open_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= 256)
		return 0;
	if (rl.rlim_cur == RLIM_INFINITY || (rl.rlim_cur - 256) / 8 >= METRICS_KEEP_OPEN)
		return METRICS_KEEP_OPEN;
	return (int)((rl.rlim_cur - 256) / 8);
}

int metrics_init(struct metrics *m, pid_t pid, const struct metrics_config *c)
{
	int r;

	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->keep_open = keep_open_budget();
	m->keep_open_procs =
	    m->keep_open / 4 < METRICS_KEEP_OPEN_PROCS ? m->keep_open / 4 : METRICS_KEEP_OPEN_PROCS;
	if (c)
		m->cfg = *c;
	else
		metrics_config_default(&m->cfg);
	if (m->cfg.window_s < 2)
		m->cfg.window_s = 2;
	m->t0 = -1;
	m->last_t = -1;
	m->tick_t = -1;
	m->limit_t = -1;
	m->mem_to_limit_s = -1;
	m->want_wchan = true;
	series_spike_init(&m->spike);
	if ((r = series_init(&m->cpu, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->cpu_long, METRICS_LONG_S)) < 0 ||
	    (r = series_init(&m->rss_long, METRICS_LONG_S)) < 0 ||
	    (r = series_init(&m->rss, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->anon, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->file, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->shmem, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->cpu_fine, m->cfg.window_s * METRICS_FINE_PER_S)) < 0 ||
	    (pid > 0 && (r = metrics_set_pids(m, &pid, 1)) < 0)) {
		metrics_free(m);
		return r;
	}
	return 0;
}

static void proc_close(struct metrics_proc *p)
{
	procstat_file_close(&p->stat_f);
	procstat_file_close(&p->status_f);
	if (p->task_dir)
		closedir(p->task_dir);
	p->task_dir = NULL;
}

static void proc_free(struct metrics_proc *p)
{
	proc_close(p);
	series_free(&p->rss);
}

/* Process pid joins (nothing is opened before its first tick). */
static struct metrics_proc *proc_add(struct metrics *m, pid_t pid)
{
	struct metrics_proc *p;

	p = array_slot((void **)&m->procs, &m->procs_cap, (size_t)m->nprocs, sizeof(*m->procs));
	if (!p || series_init(&p->rss, m->cfg.window_s) < 0)
		return NULL;
	p->pid = pid;
	p->prev_cpu_s = -1;
	procstat_file_init(&p->stat_f);
	procstat_file_init(&p->status_f);
	m->nprocs++;
	return p;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static bool sorted_has(const pid_t *v, int n, pid_t pid)
{
	return n > 0 && bsearch(&pid, v, (size_t)n, sizeof(pid_t), cmp_pid);
}

/* pids sorted (a malloc'd copy in *out), for lookups in O(log n): the
 * descendants of a build are thousands. */
static int sorted_copy(const pid_t *pids, int n, pid_t **out)
{
	*out = malloc(((size_t)n + 1) * sizeof(pid_t));
	if (!*out)
		return -ENOMEM;
	if (n > 0)
		memcpy(*out, pids, (size_t)n * sizeof(pid_t));
	qsort(*out, (size_t)n, sizeof(pid_t), cmp_pid);
	return 0;
}

int metrics_set_pids(struct metrics *m, const pid_t *pids, int n)
{
	pid_t *want, *have = NULL;
	int k = 0, r;

	if ((r = sorted_copy(pids, n, &want)) < 0)
		return r;
	/* Those not listed leave; the others keep their order. */
	for (int i = 0; i < m->nprocs; i++) {
		if (sorted_has(want, n, m->procs[i].pid))
			m->procs[k++] = m->procs[i];
		else
			proc_free(&m->procs[i]);
	}
	m->nprocs = k;
	if (!(have = malloc(((size_t)k + 1) * sizeof(pid_t)))) {
		free(want);
		return -ENOMEM;
	}
	for (int i = 0; i < k; i++)
		have[i] = m->procs[i].pid;
	qsort(have, (size_t)k, sizeof(pid_t), cmp_pid);
	/* Then the new ones (a pid listed twice, once). */
	for (int i = 0; i < n && !r; i++) {
		if (want[i] <= 0 || (i > 0 && want[i] == want[i - 1]) ||
		    sorted_has(have, k, want[i]))
			continue;
		if (!proc_add(m, want[i]))
			r = -ENOMEM;
	}
	free(have);
	free(want);
	return r;
}

const struct metrics_proc *metrics_proc(const struct metrics *m, pid_t pid)
{
	for (int i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static void thread_close(struct metrics_thread *th)
{
	procstat_file_close(&th->stat_f);
	procstat_file_close(&th->wchan_f);
	procstat_file_close(&th->children_f);
}

void metrics_free(struct metrics *m)
{
	for (int i = 0; i < m->nthreads; i++) {
		series_free(&m->threads[i].cpu);
		series_free(&m->threads[i].fine);
		series_free(&m->threads[i].fine_step);
		thread_close(&m->threads[i]);
	}
	for (int i = 0; i < m->nprocs; i++)
		proc_free(&m->procs[i]);
	free(m->procs);
	m->procs = NULL;
	m->nprocs = 0;
	m->procs_cap = 0;
	free(m->threads);
	m->threads = NULL;
	m->nthreads = m->cap = 0;
	series_free(&m->cpu);
	series_free(&m->cpu_long);
	series_free(&m->rss_long);
	series_free(&m->rss);
	series_free(&m->anon);
	series_free(&m->file);
	series_free(&m->shmem);
	series_free(&m->cpu_fine);
}

/* ---- pushing ---- */

static void note_time(struct metrics *m, double t)
{
	if (t > m->last_t)
		m->last_t = t;
}

void metrics_push_process(struct metrics *m, double t, double cpu_pct, uint64_t anon, uint64_t file,
			  uint64_t shmem)
{
	if (m->t0 < 0)
		m->t0 = t;
	note_time(m, t);
	series_push(&m->cpu, t, cpu_pct);
	series_push(&m->cpu_long, t, cpu_pct);
	series_push(&m->rss, t, (double)(anon + file + shmem));
	series_push(&m->rss_long, t, (double)(anon + file + shmem));
	series_push(&m->anon, t, (double)anon);
	series_push(&m->file, t, (double)file);
	series_push(&m->shmem, t, (double)shmem);
}

void metrics_push_cpu(struct metrics *m, double t, double cpu_pct)
{
	if (m->t0 < 0)
		m->t0 = t;
	note_time(m, t);
	series_push(&m->cpu, t, cpu_pct);
	series_push(&m->cpu_long, t, cpu_pct);
}

struct metrics_thread *metrics_thread(struct metrics *m, pid_t tid, bool create)
{
	struct metrics_thread *th;

	for (int i = 0; i < m->nthreads; i++)
		if (m->threads[i].tid == tid)
			return &m->threads[i];
	if (!create)
		return NULL;
	th = array_slot((void **)&m->threads, &m->cap, (size_t)m->nthreads, sizeof(*m->threads));
	if (!th || series_init(&th->cpu, m->cfg.window_s) < 0)
		return NULL;
	th->tid = tid;
	th->pid = m->pid;
	th->state = '?';
	th->prev_cpu_s = -1;
	th->d_since = -1;
	th->seen_t = -1;
	th->wchan_t = -1;
	th->nofutex_t = -1;
	procstat_file_init(&th->stat_f);
	procstat_file_init(&th->wchan_f);
	procstat_file_init(&th->children_f);
	m->nthreads++;
	return th;
}

/* Record what a thread is doing at t (without a CPU point). */
static void thread_observe(struct metrics *m, struct metrics_thread *th, double t, const char *comm,
			   char state)
{
	if (comm)
		snprintf(th->comm, sizeof(th->comm), "%s", comm);
	th->state = state;
	if (state == 'D') {
		if (th->d_since < 0)
			th->d_since = t;
		th->d_for_s = t - th->d_since;
	} else {
		th->d_since = -1;
		th->d_for_s = 0;
	}
	th->seen_t = t;
	th->alive = true;
	note_time(m, t);
}

void metrics_push_thread(struct metrics *m, double t, pid_t tid, const char *comm, char state,
			 double cpu_pct)
{
	struct metrics_thread *th = metrics_thread(m, tid, true);

	if (!th)
		return;
	thread_observe(m, th, t, comm, state);
	th->cpu_pct = cpu_pct;
	series_push(&th->cpu, t, cpu_pct);
}

void metrics_push_proc_rss(struct metrics *m, double t, pid_t pid, const char *comm, uint64_t rss)
{
	struct metrics_proc *p = (struct metrics_proc *)metrics_proc(m, pid);

	if (!p && !(p = proc_add(m, pid)))
		return;
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->alive = true;
	series_push(&p->rss, t, (double)rss);
	note_time(m, t);
}

/* ---- reading procfs ---- */

/* The thread tid, looked up at the slot after the previous one first:
 * /proc/PID/task lists tids in the order they are kept here. */
static struct metrics_thread *thread_at(struct metrics *m, pid_t tid, int *hint)
{
	struct metrics_thread *th;
	if (*hint < m->nthreads && m->threads[*hint].tid == tid)
		th = &m->threads[*hint];
	else
		th = metrics_thread(m, tid, true);
	if (th)
		*hint = (int)(th - m->threads) + 1;
	return th;
}

/* File f of thread th if its files are kept open, else NULL (open each time). */
static struct procstat_file *kept(const struct metrics *m, const struct metrics_thread *th,
				  struct procstat_file *f)
{
	return th - m->threads < m->keep_open ? f : NULL;
}

/* The same for a process's files. */
static struct procstat_file *proc_kept(const struct metrics *m, const struct metrics_proc *p,
				       struct procstat_file *f)
{
	return p - m->procs < m->keep_open_procs ? f : NULL;
}

/* /proc/PID/task of p: kept open and rewound within the budget, else
 * opened for this tick (closed by task_dir_done). */
static DIR *task_dir_of(const struct metrics *m, struct metrics_proc *p)
{
	char path[64];
	DIR *d;

	if (p->task_dir) {
		rewinddir(p->task_dir);
		return p->task_dir;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	if (!(d = opendir(path)))
		return NULL;
	if (p - m->procs < m->keep_open_procs)
		p->task_dir = d;
	return d;
}

static void task_dir_done(struct metrics_proc *p, DIR *d)
{
	if (d && d != p->task_dir)
		closedir(d);
}

/* A thread that moves may not wait for its turn: new, not asleep (running,
 * in D, stopped, a zombie), busy last second, a busy-floor candidate (as
 * metrics_fine's), or sampled since the last tick. */
static bool thread_must_read(const struct metrics *m, const struct metrics_thread *th, bool ran)
{
	return th->prev_cpu_s < 0 || (th->state != 'S' && th->state != 'I') || th->cpu_pct > 0 ||
	       th->floor_pct >= m->cfg.busy_floor_pct || th->peak_pct >= SERIES_BUSY_PCT || ran;
}

/* Its turn in the rotation of quiet threads: METRICS_ROTATE a tick, all of
 * them each tick when there are no more. */
static bool thread_turn(const struct metrics *m, const struct metrics_thread *th)
{
	int i = (int)(th - m->threads), n = m->nthreads;

	return n <= METRICS_ROTATE || ((i - m->rot) % n + n) % n < METRICS_ROTATE;
}

/* A quiet thread not read at t: still there (it was listed), in the state
 * last read, and no CPU (no sample says otherwise; its next read charges
 * what it used meanwhile to that second). */
static void tick_quiet(struct metrics *m, struct metrics_thread *th, double t, bool first)
{
	thread_observe(m, th, t, NULL, th->state);
	th->cpu_pct = 0;
	if (!first)
		series_push(&th->cpu, t, 0);
}

/* Its zombie children (its children file): of a thread read now, or one
 * that had some at the last tick (so a reaped one leaves the list). */
static void tick_children(struct metrics *m, struct metrics_proc *p, struct metrics_thread *th)
{
	int before = m->nzombies;

	m->reads++;
	int nk =
	    procstat_task_zombies(kept(m, th, &th->children_f), p->pid, th->tid, m->zombies,
				  (int)(sizeof(m->zombies) / sizeof(m->zombies[0])), &m->nzombies);
	th->zparent = m->nzombies > before;
	th->parent = nk > 0;
}

/* Whether a thread read now has its children file read too: always when
 * forks are not known; else when it is new, had children, or a fork came
 * lately (its child may have been missed between two reads). A parent's
 * is read every tick, read or not: its child may end any time. */
static bool children_due(const struct metrics *m, const struct metrics_thread *th, bool fresh,
			 double t)
{
	return !m->forks_known || fresh || th->parent || t <= m->kids_until;
}

void metrics_set_forks(struct metrics *m, bool known, uint64_t forks)
{
	/* A full rotation after the last fork: every thread's list is read
	 * once while a child it made may still be there. */
	if (known && (!m->forks_known || forks != m->forks))
		m->kids_until = m->last_t + 2 + m->nthreads / METRICS_ROTATE;
	if (!known)
		m->kids_until = 0;
	m->forks_known = known;
	m->forks = forks;
}

/* Its wait channel (a thread not running), as of its stat's last read:
 * read only while a view shows it (metrics_want_wchan). */
static void tick_wchan(struct metrics *m, struct metrics_proc *p, struct metrics_thread *th,
		       char state)
{
	/* A sleeper caught just after a stop (wall mode stops it at every
	 * sample) shows "do_syscall_64" for a moment: keep the word it sleeps
	 * in, so cpu and wall mode give it one name ("nanosleep"). */
	char prev_wchan[sizeof(th->wchan)];
	memcpy(prev_wchan, th->wchan, sizeof(prev_wchan));
	th->wchan[0] = '\0';
	th->wchan_t = th->read_t;
	if (state != 'R' && ++m->reads &&
	    procstat_file_read(kept(m, th, &th->wchan_f), p->pid, th->tid, "wchan", th->wchan,
			       sizeof(th->wchan)) >= 0 &&
	    !strcmp(th->wchan, "0"))
		th->wchan[0] = '\0';
	if (waits_wchan_generic(th->wchan) && state != 'R')
		memcpy(th->wchan, prev_wchan[0] ? prev_wchan : "", strlen(prev_wchan) + 1);
}

/* One thread of p from its stat (and wchan, children) at t. */
static void tick_thread(struct metrics *m, struct metrics_proc *p, struct metrics_thread *th,
			double t, double dt, bool first)
{
	struct procstat_task pt;
	char buf[1024];

	m->reads++;
	if (procstat_file_read(kept(m, th, &th->stat_f), p->pid, th->tid, "stat", buf,
			       sizeof(buf)) < 0 ||
	    procstat_parse_stat(buf, &pt.state, &pt.cpu_s, pt.comm, sizeof(pt.comm)) < 0)
		return;
	th->pid = p->pid;
	snprintf(th->pcomm, sizeof(th->pcomm), "%s", p->comm);
	if (first) {
		thread_observe(m, th, t, pt.comm, pt.state);
	} else {
		/* A thread not seen before was born within this
		 * interval, so all its CPU time belongs to it; one not read
		 * for a while used its CPU since its last read. */
		double prev = th->prev_cpu_s >= 0 ? th->prev_cpu_s : 0;
		double span =
		    th->prev_cpu_s >= 0 && th->read_t > 0 && t > th->read_t ? t - th->read_t : dt;
		double pct = (pt.cpu_s - prev) / span * 100.0;
		thread_observe(m, th, t, pt.comm, pt.state);
		th->cpu_pct = pct > 0 ? pct : 0;
		series_push(&th->cpu, t, th->cpu_pct);
	}
	th->prev_cpu_s = pt.cpu_s;
	th->read_t = t;
	if (m->want_wchan)
		tick_wchan(m, p, th, pt.state);
	else
		th->wchan[0] = '\0';
}

/* hint: where the next thread is expected in m->threads, carried from one
 * process to the next (they are read in the order they are kept). Every
 * thread listed is counted and kept alive; only those that move or whose
 * turn it is are read. */
static void tick_threads(struct metrics *m, struct metrics_proc *p, double t, double dt, bool first,
			 int *hint)
{
	DIR *d = task_dir_of(m, p);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct metrics_thread *th;
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (*end || tid <= 0 || !(th = thread_at(m, (pid_t)tid, hint)))
			continue;
		uint64_t ns = m->samples_of ? m->samples_of(m->samples_ctx, th->tid) : 0;
		bool ran = ns != th->samples, read;
		th->samples = ns;
		bool fresh = th->prev_cpu_s < 0;
		read = first || thread_must_read(m, th, ran) || thread_turn(m, th);
		if (read)
			tick_thread(m, p, th, t, dt, first);
		else
			tick_quiet(m, th, t, first);
		/* read while no view showed it: its wait channel now, in turn */
		if (!read && m->want_wchan && th->wchan_t < th->read_t && m->wchan_due-- > 0)
			tick_wchan(m, p, th, th->state);
		if ((read && children_due(m, th, fresh || first, t)) || th->zparent ||
		    (th->parent && m->forks_known))
			tick_children(m, p, th);
	}
	task_dir_done(p, d);
}

void metrics_want_wchan(struct metrics *m, bool on)
{
	m->want_wchan = on;
}

void metrics_set_samples(struct metrics *m, uint64_t (*fn)(void *ctx, pid_t tid), void *ctx)
{
	m->samples_of = fn;
	m->samples_ctx = ctx;
}

/* One process at t: its CPU % since the last tick into *pct (all of its
 * CPU time when it joined since: it was forked within the interval) and
 * its memory into p. -errno when it is gone (its files are closed). */
static int tick_proc(struct metrics *m, struct metrics_proc *p, double t, double dt, bool first,
		     double *pct)
{
	struct procstat_mem pm;
	char buf[4096], st;
	double cpu_s;
	int r;

	*pct = 0;
	r = (int)procstat_file_read(proc_kept(m, p, &p->stat_f), p->pid, 0, "stat", buf,
				    sizeof(buf));
	if (r >= 0)
		r = procstat_parse_stat(buf, &st, &cpu_s, p->comm, sizeof(p->comm));
	p->alive = r >= 0;
	if (r < 0) {
		proc_close(p);
		return r;
	}
	/* A zombie has no memory lines: its last reading stays. */
	if (procstat_file_read(proc_kept(m, p, &p->status_f), p->pid, 0, "status", buf,
			       sizeof(buf)) >= 0 &&
	    procstat_parse_status_mem(buf, &pm) == 0) {
		p->anon = pm.anon;
		p->file = pm.file;
		p->shmem = pm.shmem;
	}
	if (!first) {
		double v = (cpu_s - (p->prev_cpu_s >= 0 ? p->prev_cpu_s : 0)) / dt * 100.0;
		*pct = v > 0 ? v : 0;
		series_push(&p->rss, t, (double)(p->anon + p->file + p->shmem));
	}
	p->prev_cpu_s = cpu_s;
	return 0;
}

/* The memory limit of the first process still there, every 30 s. */
static void read_limit(struct metrics *m, double t)
{
	uint64_t limit;
	const char *src;

	if (m->limit_t >= 0 && t - m->limit_t < LIMIT_REREAD_S)
		return;
	for (int i = 0; i < m->nprocs; i++) {
		if (procstat_mem_limit(m->procs[i].pid, &limit, &src) == 0) {
			m->mem_limit = limit;
			m->mem_limit_src = src;
			break;
		}
	}
	m->limit_t = t;
}

static void fine_choose(struct metrics *m);

int metrics_tick(struct metrics *m, double t)
{
	double dt = m->tick_t >= 0 ? t - m->tick_t : 0, cpu = 0;
	uint64_t anon = 0, file = 0, shmem = 0;
	bool first = dt <= 0;
	int alive = 0, r = -ESRCH, hint = 0;

	m->nzombies = 0;
	m->wchan_due = METRICS_ROTATE;
	for (int i = 0; i < m->nprocs; i++) {
		struct metrics_proc *p = &m->procs[i];
		double pct;
		int e = tick_proc(m, p, t, dt, first, &pct);

		if (e < 0) {
			if (e != -ENOENT && e != -ESRCH)
				r = e;
			continue;
		}
		alive++;
		cpu += pct;
		anon += p->anon;
		file += p->file;
		shmem += p->shmem;
		tick_threads(m, p, t, dt, first, &hint);
	}
	if (!alive) {
		/* All gone: keep the series, mark every thread gone. */
		note_time(m, t);
		metrics_eval(m, t);
		return r;
	}
	read_limit(m, t);
	if (m->nthreads > METRICS_ROTATE)
		m->rot = (m->rot + METRICS_ROTATE) % m->nthreads;
	if (!first)
		metrics_push_process(m, t, cpu, anon, file, shmem);
	m->tick_t = t;
	note_time(m, t);
	metrics_eval(m, t);
	fine_choose(m);
	return 0;
}

/* ---- fine steps ---- */

/* A thread the fine steps read: one that may hold a floor (its one-second
 * floor) or that may burst (it burns a real share in some seconds): the
 * bursting ones say where the pauses are. */
static bool fine_candidate(const struct metrics *m, const struct metrics_thread *th)
{
	return th->alive &&
	       (th->floor_pct >= m->cfg.busy_floor_pct || th->peak_pct >= SERIES_BUSY_PCT);
}

/* One fine step of th: its CPU and the class of the step (idle, busy). */
static void fine_push(struct metrics *m, struct metrics_thread *th, double t, double pct,
		      char state)
{
	size_t cap = m->cfg.window_s * METRICS_FINE_PER_S;

	if ((!th->fine.cap && series_init(&th->fine, cap) < 0) ||
	    (!th->fine_step.cap && series_init(&th->fine_step, cap) < 0))
		return;
	series_push(&th->fine, t, pct);
	series_push(&th->fine_step, t, series_step_of(pct, state == 'R'));
}

/* One fine step of th at t: its CPU % since its last step, or -1 when this
 * is its first (or it is gone). */
static double fine_thread(struct metrics *m, struct metrics_thread *th, double t)
{
	struct procstat_task pt;
	double pct = -1;
	char buf[1024];

	/* its stat file kept open by the ticks: ten reads a second, no open */
	if (procstat_file_read(kept(m, th, &th->stat_f), th->pid, th->tid, "stat", buf,
			       sizeof(buf)) < 0 ||
	    procstat_parse_stat(buf, &pt.state, &pt.cpu_s, NULL, 0) < 0)
		return -1;
	if (th->fine_t > 0 && t > th->fine_t) {
		pct = (pt.cpu_s - th->fine_cpu_s) / (t - th->fine_t) * 100.0;
		pct = pct > 0 ? pct : 0;
		fine_push(m, th, t, pct, pt.state);
	}
	th->fine_t = t;
	th->fine_cpu_s = pt.cpu_s;
	return pct;
}

void metrics_push_fine(struct metrics *m, double t, double cpu_pct)
{
	series_push(&m->cpu_fine, t, cpu_pct);
	m->fine_t = t;
}

void metrics_push_thread_fine(struct metrics *m, double t, pid_t tid, double cpu_pct, char state)
{
	struct metrics_thread *th = metrics_thread(m, tid, false);

	if (th)
		fine_push(m, th, t, cpu_pct, state);
}

/* The threads the fine steps read until the next tick: the first
 * METRICS_FINE_THREADS candidates (their floor and peak move only at a
 * tick); the others start again when they become one. */
static void fine_choose(struct metrics *m)
{
	m->nfine = 0;
	for (int i = 0; i < m->nthreads; i++) {
		struct metrics_thread *th = &m->threads[i];
		if (m->nfine < METRICS_FINE_THREADS && fine_candidate(m, th))
			m->fine_idx[m->nfine++] = i;
		else
			th->fine_t = 0; /* a gap: start again when it is one */
	}
}

/* The candidates' fine steps at t; their sum into *sum, how many had a
 * step into the return value. */
static int fine_threads(struct metrics *m, double t, double *sum)
{
	int stepped = 0;

	*sum = 0;
	for (int k = 0; k < m->nfine; k++) {
		if (m->fine_idx[k] >= m->nthreads)
			continue;
		double pct = fine_thread(m, &m->threads[m->fine_idx[k]], t);
		if (pct >= 0) {
			*sum += pct;
			stepped++;
		}
	}
	return stepped;
}

/* Past METRICS_ROTATE threads the process's fine step is the sum of its
 * candidates' (every thread that may hold a floor or burst is one): its
 * stat sums every thread's times in the kernel, ten times a second. */
int metrics_fine(struct metrics *m, double t)
{
	double sum = 0, tsum;
	int n = 0;
	bool many = m->nthreads > METRICS_ROTATE;

	if (m->fine_t > 0 && t - m->fine_t < 0.09)
		return 0;
	for (int i = 0; i < m->nprocs && i < METRICS_FINE_PROCS && !many; i++) {
		struct metrics_proc *p = &m->procs[i];
		char st, buf[1024];
		double c;
		if (p->alive &&
		    procstat_file_read(proc_kept(m, p, &p->stat_f), p->pid, 0, "stat", buf,
				       sizeof(buf)) >= 0 &&
		    procstat_parse_stat(buf, &st, &c, NULL, 0) == 0) {
			sum += c;
			n++;
		}
	}
	/* A process that came or went changes the sum, not the rate. */
	if (!many && m->fine_t > 0 && n == m->fine_n && n > 0) {
		double pct = (sum - m->fine_cpu_s) / (t - m->fine_t) * 100.0;
		series_push(&m->cpu_fine, t, pct > 0 ? pct : 0);
	}
	bool had = m->fine_t > 0;
	m->fine_t = t;
	m->fine_cpu_s = sum;
	m->fine_n = n;
	int stepped = fine_threads(m, t, &tsum);
	if (many) {
		for (int i = 0; i < m->nprocs; i++)
			n += m->procs[i].alive;
		if (had && stepped)
			series_push(&m->cpu_fine, t, tsum);
	}
	return n ? 0 : -ESRCH;
}

/* ---- readings ---- */

/* The values of fs at the process's fine steps ft[0..n) into out (left
 * as they are where fs has no point): both are pushed at the same times
 * by metrics_fine. tt and vv hold cap points. */
static void at_steps(const struct series *fs, const double *ft, size_t n, double *out, double *tt,
		     double *vv, size_t cap)
{
	size_t k = series_get(fs, tt, vv, cap), j = 0;

	for (size_t i = 0; i < n && j < k; i++) {
		while (j < k && tt[j] < ft[i] - 1e-6)
			j++;
		if (j < k && tt[j] <= ft[i] + 1e-6)
			out[i] = vv[j];
	}
}

/* Thread th's step classes at the process's fine steps (NONE where it was
 * not measured), and its CPU there into cpu. */
static void thread_steps(const struct metrics_thread *th, const double *ft, size_t n,
			 unsigned char *st, double *cpu, double *tt, double *vv, size_t cap)
{
	for (size_t i = 0; i < n; i++)
		cpu[i] = SERIES_STEP_NONE;
	at_steps(&th->fine_step, ft, n, cpu, tt, vv, cap);
	for (size_t i = 0; i < n; i++)
		st[i] = (unsigned char)cpu[i];
	for (size_t i = 0; i < n; i++)
		cpu[i] = 0;
	at_steps(&th->fine, ft, n, cpu, tt, vv, cap);
}

/* The busy floor, on the ~100 ms steps (one-second buckets alias a 1 s /
 * 1 s rhythm into a flat line): the pauses are the steps at which every
 * bursting thread sleeps (series_pauses); the floor is the process's
 * median CPU in them, and a thread holds it when its own median there is
 * a real part of it. No bursting thread, no pauses: high CPU, no floor. */
static void eval_floor(struct metrics *m, size_t nsec)
{
	size_t n = m->cpu_fine.len, cap = m->cpu_fine.cap ? m->cpu_fine.cap : 1, nth = 0;
	double *ft = malloc(cap * sizeof(double)), *fv = malloc(cap * sizeof(double));
	double *tt = malloc(cap * sizeof(double)), *vv = malloc(cap * sizeof(double));
	int rows[METRICS_FLOOR_ROWS];
	unsigned char *st = NULL;
	double *cpu = NULL;
	bool *pause = NULL;

	m->alert_busy_floor = false;
	m->alert_floor = -1;
	for (int i = 0; i < m->nthreads; i++)
		m->threads[i].pause_pct = -1;
	if (!ft || !fv || !tt || !vv || nsec < 5 || n < 2 * METRICS_FINE_PER_S)
		goto out;
	n = series_get(&m->cpu_fine, ft, fv, cap);
	for (int i = 0; i < m->nthreads && nth < METRICS_FLOOR_ROWS; i++)
		if (m->threads[i].fine_step.len)
			rows[nth++] = i;
	st = malloc((nth ? nth : 1) * n);
	cpu = malloc((nth ? nth : 1) * n * sizeof(double));
	pause = malloc(n * sizeof(bool));
	if (!st || !cpu || !pause)
		goto out;
	for (size_t j = 0; j < nth; j++)
		thread_steps(&m->threads[rows[j]], ft, n, st + j * n, cpu + j * n, tt, vv, cap);
	if (series_pauses(st, nth, n, pause) < SERIES_PAUSE_MIN_STEPS)
		goto out;
	m->alert_floor = series_median_at(fv, NULL, pause, n);
	m->alert_busy_floor = m->alert_floor >= m->cfg.busy_floor_pct;
	for (size_t j = 0; j < nth; j++)
		m->threads[rows[j]].pause_pct = series_median_at(cpu + j * n, st + j * n, pause, n);
out:
	ARRAY_FREE_ALL(ft, fv, tt, vv, st, cpu, pause);
}

static void eval_cpu(struct metrics *m, double *tv, double *vv)
{
	size_t n = series_get(&m->cpu, tv, vv, m->cpu.cap);

	m->cpu_now = series_last(&m->cpu);
	m->cpu_floor = series_percentile(vv, n, 0.10);
	m->cpu_p90 = series_percentile(vv, n, 0.90);
	m->cpu_peak = series_max(vv, n);

	/* The default baseline: the first period, taken once it is complete
	 * (points are one a second, so period - 1 after the first point). */
	double period = m->cfg.baseline_period_s;
	if (period > m->cfg.window_s)
		period = m->cfg.window_s;
	if (!m->baseline_auto_done && n && m->t0 >= 0 && m->last_t - m->t0 >= period - 1 - 1e-9) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (tv[i] >= m->t0 && tv[i] < m->t0 + period)
				vv[k++] = vv[i];
		if (k) {
			m->cpu_baseline = series_median(vv, k);
			m->baseline_set = true;
			m->baseline_manual = false;
		}
		m->baseline_auto_done = true;
	}

	eval_floor(m, n);

	if (m->baseline_set && n) {
		m->alert_spike =
		    series_spike_update(&m->spike, m->last_t, m->cpu_now, m->cpu_baseline,
					m->cfg.spike_factor, m->cfg.spike_for_s, &m->spike_held_s);
	} else {
		series_spike_init(&m->spike);
		m->alert_spike = false;
		m->spike_held_s = 0;
	}
}

static void eval_mem(struct metrics *m, double *tv, double *vv)
{
	size_t n = series_get(&m->rss, tv, vv, m->rss.cap);
	double mean = 0;

	m->mem_now = (uint64_t)series_last(&m->rss);
	m->anon_now = (uint64_t)series_last(&m->anon);
	m->file_now = (uint64_t)series_last(&m->file);
	m->shmem_now = (uint64_t)series_last(&m->shmem);
	m->mem_growing = NULL;
	m->mem_to_limit_s = -1;
	m->alert_stairs = false;
	memset(&m->mem_trend, 0, sizeof(m->mem_trend));
	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		mean += vv[i] / (double)n;
	/* Below a MiB (or 0.5% of the size) is allocator noise, not a trend. */
	m->mem_noise = fmax(MIB, 0.005 * mean);
	series_trend(tv, vv, n, m->mem_noise, &m->mem_trend);
	m->mem_rising = false;
	if (n < MIN_TREND_POINTS) {
		m->mem_trend.kind = SERIES_FLAT;
		return;
	}
	/* A climb of a few seconds is also how every allocate-then-free cycle
	 * starts: call it stairs only once it has lasted long enough. */
	double min_span = fmin(STAIRS_MIN_SPAN_S, 0.9 * m->cfg.window_s);
	if (m->mem_trend.kind == SERIES_STAIRS && m->mem_trend.span_s < min_span) {
		m->mem_trend.kind = SERIES_FLAT;
		m->mem_rising = true;
	}

	/* Name the part that grows fastest. */
	if (m->mem_trend.slope > 0) {
		static const char *const names[] = {"anonymous", "file-backed", "shared"};
		const struct series *parts[] = {&m->anon, &m->file, &m->shmem};
		double best = 0;
		for (int i = 0; i < 3; i++) {
			size_t k = series_get(parts[i], tv, vv, parts[i]->cap);
			double s = series_theil_sen(tv, vv, k);
			if (s > best) {
				best = s;
				m->mem_growing = names[i];
			}
		}
		n = series_get(&m->rss, tv, vv, m->rss.cap); /* restore */
	}

	m->alert_stairs = m->mem_trend.kind == SERIES_STAIRS;
	if (!m->mem_limit)
		return;
	/* Project only a steady rise: stairs, or a rise with no real drop for
	 * the last two minutes that is not one single jump. */
	bool rising = m->mem_trend.kind == SERIES_STAIRS;
	if (!rising && m->mem_trend.kind == SERIES_FLAT && m->mem_trend.slope > 0 &&
	    m->mem_trend.since_drop_s >= 120 &&
	    m->mem_trend.slope * m->mem_trend.span_s > 3 * m->mem_noise) {
		double step = 0, range = m->mem_trend.hi - m->mem_trend.lo;
		for (size_t i = 1; i < n; i++)
			step = fmax(step, vv[i] - vv[i - 1]);
		rising = step < 0.6 * range;
	}
	if (rising)
		m->mem_to_limit_s =
		    series_time_to((double)m->mem_now, m->mem_trend.slope, (double)m->mem_limit);
}

/* How much p's RSS grew over the window: from its oldest point, or from
 * nothing when it joined after the window's start (its whole RSS is
 * growth of the total). */
static double proc_growth(const struct metrics *m, const struct metrics_proc *p)
{
	double v0;

	if (!p->rss.len)
		return 0;
	/* The oldest points (series_get keeps the newest). */
	v0 = p->rss.v[p->rss.head];
	if (m->rss.len && p->rss.t[p->rss.head] > m->rss.t[m->rss.head] + 1.5)
		v0 = 0;
	return series_last(&p->rss) - v0;
}

/* Several processes and the total grows: the one process behind most of
 * the growth (60% of what grew, and more than the noise). */
static void eval_grower(struct metrics *m)
{
	double sum = 0, best = 0;
	int bi = -1;

	m->mem_grower_pid = 0;
	m->mem_grower_comm[0] = '\0';
	if (m->nprocs < 2 || !(m->mem_trend.slope > 0))
		return;
	for (int i = 0; i < m->nprocs; i++) {
		double g = proc_growth(m, &m->procs[i]);
		if (g <= 0)
			continue;
		sum += g;
		if (g > best) {
			best = g;
			bi = i;
		}
	}
	if (bi < 0 || best < 0.6 * sum || best < m->mem_noise)
		return;
	m->mem_grower_pid = m->procs[bi].pid;
	snprintf(m->mem_grower_comm, sizeof(m->mem_grower_comm), "%s", m->procs[bi].comm);
}

static void drop_thread(struct metrics *m, int i)
{
	series_free(&m->threads[i].cpu);
	series_free(&m->threads[i].fine);
	series_free(&m->threads[i].fine_step);
	thread_close(&m->threads[i]);
	memmove(&m->threads[i], &m->threads[i + 1],
		(size_t)(m->nthreads - i - 1) * sizeof(m->threads[0]));
	m->nthreads--;
}

static void eval_threads(struct metrics *m, double t, double *tv, double *vv)
{
	double best = -1;
	/* A thread explains the floor when it burns a real part of it. */
	double need = fmax(m->cfg.busy_floor_pct, 0.25 * m->alert_floor);

	m->busiest_floor_tid = 0;
	m->multi = m->nprocs > 1;
	for (int i = 0; i < m->nthreads; i++) {
		struct metrics_thread *th = &m->threads[i];
		size_t n;

		/* Alive means seen by the newest tick or push. */
		th->alive = th->seen_t >= m->last_t - 1e-6;
		if (!th->alive && t - th->seen_t > m->cfg.window_s) {
			drop_thread(m, i--);
			continue;
		}
		n = series_get(&th->cpu, NULL, vv, th->cpu.cap);
		th->floor_pct = series_percentile(vv, n, 0.10);
		th->peak_pct = series_max(vv, n);
		th->busy_floor = m->alert_busy_floor && th->alive && th->pause_pct >= need;
		th->stuck = th->alive && th->state == 'D' && th->d_for_s >= m->cfg.stuck_s;
		th->zombie = th->state == 'Z';
		if (th->pid != m->threads[0].pid)
			m->multi = true;
		if (th->busy_floor && th->floor_pct > best) {
			best = th->floor_pct;
			m->busiest_floor_tid = th->tid;
		}
	}
}

/* The process CPU's rhythm over its long series; without one, a thread's
 * (one of many spiking: the sum hides it), among the
 * METRICS_RHYTHM_THREADS alive ones with the highest peak, the most
 * regular; and the RSS's falls (a sawtooth). */
static void eval_rhythm(struct metrics *m)
{
	struct metrics_thread *top[METRICS_RHYTHM_THREADS] = {NULL};
	struct rhythm r;

	m->alert_rhythm = rhythm_series(&m->cpu_long, RHYTHM_MARGIN, &m->rhythm);
	m->alert_thread_rhythm = false;
	for (int i = 0; i < m->nthreads && !m->alert_rhythm; i++) {
		struct metrics_thread *th = &m->threads[i];
		int at = METRICS_RHYTHM_THREADS;
		while (at > 0 && th->alive &&
		       (!top[at - 1] || th->peak_pct > top[at - 1]->peak_pct))
			at--;
		if (at == METRICS_RHYTHM_THREADS)
			continue;
		memmove(&top[at + 1], &top[at], (METRICS_RHYTHM_THREADS - 1 - at) * sizeof(top[0]));
		top[at] = th;
	}
	for (int i = 0; i < METRICS_RHYTHM_THREADS && top[i]; i++) {
		if (!rhythm_series(&top[i]->cpu, RHYTHM_MARGIN, &r) ||
		    (m->alert_thread_rhythm && r.p >= m->thread_rhythm.p))
			continue;
		m->alert_thread_rhythm = true;
		m->thread_rhythm = r;
		m->rhythm_tid = top[i]->tid;
		snprintf(m->rhythm_comm, sizeof(m->rhythm_comm), "%s", top[i]->comm);
	}
	/* The box's memory used is no RSS (and the page cache's churn not
	 * a program's). */
	m->alert_mem_rhythm = !m->box && rhythm_series_falls(&m->rss_long, METRICS_SWING_MIN,
							     METRICS_SWING_FRAC, &m->mem_rhythm);
}

void metrics_eval(struct metrics *m, double t)
{
	size_t cap = m->cpu.cap > 1 ? m->cpu.cap : 1;
	double *tv = malloc(cap * sizeof(double));
	double *vv = malloc(cap * sizeof(double));

	if (tv && vv) {
		eval_cpu(m, tv, vv);
		eval_mem(m, tv, vv);
		eval_grower(m);
		eval_threads(m, t, tv, vv);
		eval_rhythm(m); /* after the threads' peaks */
	}
	free(tv);
	free(vv);
}

void metrics_baseline_now(struct metrics *m)
{
	double v[64];
	size_t n;

	if (!m->cpu.len)
		return;
	n = series_since(&m->cpu, m->last_t - BASELINE_NOW_S + 0.5, NULL, v, 64);
	if (!n)
		return;
	m->cpu_baseline = series_median(v, n);
	m->baseline_set = true;
	m->baseline_manual = true;
	m->baseline_auto_done = true;
	series_spike_init(&m->spike);
	m->alert_spike = false;
	m->spike_held_s = 0;
}

void metrics_baseline_clear(struct metrics *m)
{
	m->baseline_set = false;
	m->baseline_manual = false;
	m->baseline_auto_done = true; /* do not come back by itself */
	m->cpu_baseline = 0;
	series_spike_init(&m->spike);
	m->alert_spike = false;
	m->spike_held_s = 0;
}

const char *metrics_thread_name(void *ctx, int tid)
{
	struct metrics_thread *t = metrics_thread(ctx, tid, false);
	return t ? t->comm : NULL;
}
