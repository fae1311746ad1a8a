/*
 * metrics — per-second procfs readings of a process and its threads, and
 * what they mean: floor, baseline, peak, memory trend, time to the limit,
 * thread flags and the alerts (see metrics.h for the definitions).
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
 *
 * Memory: RSS = RssAnon + RssFile + RssShmem (/proc/PID/status, Linux 4.5+).
 * The cgroup limit is re-read every 30 s (it can be changed at run time).
 * A zombie process has no memory lines; the last values are kept.
 *
 * Cost: a tick reads only the target's own files — its stat and status,
 * and per thread stat, wchan (when not running) and children (whose
 * zombies are the only other processes read). The files stay open and are
 * read again with pread (procstat_file), the task directory is rewound,
 * not reopened, so a tick of a 6-thread process is ~15 reads and no open.
 */
#include "stacktop/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "stacktop/mem.h"
#include "stacktop/procstat.h"
#include "stacktop/text.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)
#define LIMIT_REREAD_S 30.0
#define BASELINE_NOW_S 10.0
#define STAIRS_MIN_SPAN_S 30.0 /* seconds of climb before a leak is suspected */
#define MIN_TREND_POINTS METRICS_TREND_MIN_S

void metrics_config_default(struct metrics_config *c)
{
	memset(c, 0, sizeof(*c));
	c->window_s = 60;
	c->busy_floor_pct = 5;
	c->spike_factor = 2;
	c->spike_for_s = 30;
	c->stuck_s = 5;
	c->baseline_period_s = 60;
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
	if (c)
		m->cfg = *c;
	else
		metrics_config_default(&m->cfg);
	if (m->cfg.window_s < 2)
		m->cfg.window_s = 2;
	m->t0 = -1;
	m->last_t = -1;
	m->prev_cpu_s = -1;
	m->tick_t = -1;
	m->limit_t = -1;
	m->mem_to_limit_s = -1;
	procstat_file_init(&m->stat_f);
	procstat_file_init(&m->status_f);
	series_spike_init(&m->spike);
	if ((r = series_init(&m->cpu, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->rss, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->anon, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->file, m->cfg.window_s)) < 0 ||
	    (r = series_init(&m->shmem, m->cfg.window_s)) < 0) {
		metrics_free(m);
		return r;
	}
	return 0;
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
		thread_close(&m->threads[i]);
	}
	procstat_file_close(&m->stat_f);
	procstat_file_close(&m->status_f);
	if (m->task_dir)
		closedir(m->task_dir);
	m->task_dir = NULL;
	free(m->threads);
	m->threads = NULL;
	m->nthreads = m->cap = 0;
	series_free(&m->cpu);
	series_free(&m->rss);
	series_free(&m->anon);
	series_free(&m->file);
	series_free(&m->shmem);
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
	series_push(&m->rss, t, (double)(anon + file + shmem));
	series_push(&m->anon, t, (double)anon);
	series_push(&m->file, t, (double)file);
	series_push(&m->shmem, t, (double)shmem);
}

struct metrics_thread *metrics_thread(struct metrics *m, pid_t tid, bool create)
{
	struct metrics_thread *th;

	for (int i = 0; i < m->nthreads; i++)
		if (m->threads[i].tid == tid)
			return &m->threads[i];
	if (!create)
		return NULL;
	if (mem_grow((void **)&m->threads, &m->cap, (size_t)m->nthreads + 1, sizeof(*m->threads)))
		return NULL;
	th = &m->threads[m->nthreads];
	memset(th, 0, sizeof(*th));
	if (series_init(&th->cpu, m->cfg.window_s) < 0)
		return NULL;
	th->tid = tid;
	th->state = '?';
	th->prev_cpu_s = -1;
	th->d_since = -1;
	th->seen_t = -1;
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

static void tick_threads(struct metrics *m, double t, double dt, bool first)
{
	struct dirent *e;
	int hint = 0;

	m->nzombies = 0;
	if (!m->task_dir) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)m->pid);
		m->task_dir = opendir(path);
		if (!m->task_dir)
			return;
	} else {
		rewinddir(m->task_dir);
	}
	while ((e = readdir(m->task_dir))) {
		struct procstat_task pt;
		struct metrics_thread *th;
		char *end, buf[1024];
		long tid = strtol(e->d_name, &end, 10);

		if (*end || tid <= 0 || !(th = thread_at(m, (pid_t)tid, &hint)))
			continue;
		if (procstat_file_read(kept(m, th, &th->stat_f), m->pid, th->tid, "stat", buf,
				       sizeof(buf)) < 0 ||
		    procstat_parse_stat(buf, &pt.state, &pt.cpu_s, pt.comm, sizeof(pt.comm)) < 0)
			continue;
		if (first) {
			thread_observe(m, th, t, pt.comm, pt.state);
		} else {
			/* A thread not seen before was born within this
			 * interval, so all its CPU time belongs to it. */
			double prev = th->prev_cpu_s >= 0 ? th->prev_cpu_s : 0;
			double pct = (pt.cpu_s - prev) / dt * 100.0;
			thread_observe(m, th, t, pt.comm, pt.state);
			th->cpu_pct = pct > 0 ? pct : 0;
			series_push(&th->cpu, t, th->cpu_pct);
		}
		th->prev_cpu_s = pt.cpu_s;
		th->wchan[0] = '\0';
		if (pt.state != 'R' &&
		    procstat_file_read(kept(m, th, &th->wchan_f), m->pid, th->tid, "wchan",
				       th->wchan, sizeof(th->wchan)) >= 0 &&
		    !strcmp(th->wchan, "0"))
			th->wchan[0] = '\0';
		procstat_task_zombies(kept(m, th, &th->children_f), m->pid, th->tid, m->zombies,
				      (int)(sizeof(m->zombies) / sizeof(m->zombies[0])),
				      &m->nzombies);
	}
}

int metrics_tick(struct metrics *m, double t)
{
	struct procstat_mem pm;
	double cpu_s, dt;
	bool first;
	char st;
	int r;

	char buf[4096];
	r = (int)procstat_file_read(&m->stat_f, m->pid, 0, "stat", buf, sizeof(buf));
	if (r >= 0)
		r = procstat_parse_stat(buf, &st, &cpu_s, NULL, 0);
	if (r < 0) {
		/* Gone: keep the series, mark every thread gone. */
		note_time(m, t);
		metrics_eval(m, t);
		return r == -ENOENT ? -ESRCH : r;
	}
	dt = m->tick_t >= 0 ? t - m->tick_t : 0;
	first = dt <= 0;
	if (m->limit_t < 0 || t - m->limit_t >= LIMIT_REREAD_S) {
		uint64_t limit;
		const char *src;
		if (procstat_mem_limit(m->pid, &limit, &src) == 0) {
			m->mem_limit = limit;
			m->mem_limit_src = src;
		}
		m->limit_t = t;
	}
	if (procstat_file_read(&m->status_f, m->pid, 0, "status", buf, sizeof(buf)) < 0 ||
	    procstat_parse_status_mem(buf, &pm) < 0) {
		pm.anon = (uint64_t)series_last(&m->anon);
		pm.file = (uint64_t)series_last(&m->file);
		pm.shmem = (uint64_t)series_last(&m->shmem);
	}
	if (!first) {
		double pct = (cpu_s - m->prev_cpu_s) / dt * 100.0;
		metrics_push_process(m, t, pct > 0 ? pct : 0, pm.anon, pm.file, pm.shmem);
	}
	m->prev_cpu_s = cpu_s;
	tick_threads(m, t, dt, first);
	m->tick_t = t;
	note_time(m, t);
	metrics_eval(m, t);
	return 0;
}

/* ---- readings ---- */

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

	m->alert_busy_floor = n >= 5 && m->cpu_floor >= m->cfg.busy_floor_pct &&
			      m->cpu_p90 >= m->cpu_floor + 10 && m->cpu_p90 >= 1.5 * m->cpu_floor;

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

static void drop_thread(struct metrics *m, int i)
{
	series_free(&m->threads[i].cpu);
	thread_close(&m->threads[i]);
	memmove(&m->threads[i], &m->threads[i + 1],
		(size_t)(m->nthreads - i - 1) * sizeof(m->threads[0]));
	m->nthreads--;
}

/* Median CPU of a thread over the seconds when the whole process sat at
 * its floor (ft[0..nf), times of those ticks): what it burns while
 * everything else idles. -1 when it has no point at any of them. */
static double cpu_at_floor(const struct metrics_thread *th, const double *ft, size_t nf,
			   double *tv, double *vv)
{
	size_t n = series_get(&th->cpu, tv, vv, th->cpu.cap), k = 0, j = 0;

	for (size_t i = 0; i < n && j < nf; i++) {
		while (j < nf && ft[j] < tv[i] - 0.5)
			j++;
		if (j < nf && ft[j] <= tv[i] + 0.5)
			vv[k++] = vv[i];
	}
	return k ? series_median(vv, k) : -1;
}

/* Times of the ticks at which the process was at its floor (within a
 * quarter of it, or 2 points). Returns how many, written to ft. */
static size_t floor_ticks(const struct metrics *m, double *ft, double *vv)
{
	size_t n = series_get(&m->cpu, ft, vv, m->cpu.cap), k = 0;
	double near = m->cpu_floor * 1.25 + 2;

	for (size_t i = 0; i < n; i++)
		if (vv[i] <= near)
			ft[k++] = ft[i];
	return k;
}

static void eval_threads(struct metrics *m, double t, double *tv, double *vv)
{
	double best = -1;
	size_t cap = m->cpu.cap > 1 ? m->cpu.cap : 1;
	double *ft = m->alert_busy_floor ? malloc(cap * sizeof(double)) : NULL;
	size_t nf = ft ? floor_ticks(m, ft, vv) : 0;
	/* A thread explains the floor when it burns a real part of it. */
	double need = fmax(m->cfg.busy_floor_pct, 0.25 * m->cpu_floor);

	m->busiest_floor_tid = 0;
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
		th->busy_floor = m->alert_busy_floor && th->alive && n >= 5 && nf >= 3 &&
				 th->floor_pct >= m->cfg.busy_floor_pct &&
				 cpu_at_floor(th, ft, nf, tv, vv) >= need;
		th->stuck = th->alive && th->state == 'D' && th->d_for_s >= m->cfg.stuck_s;
		th->zombie = th->state == 'Z';
		if (th->busy_floor && th->floor_pct > best) {
			best = th->floor_pct;
			m->busiest_floor_tid = th->tid;
		}
	}
	free(ft);
}

void metrics_eval(struct metrics *m, double t)
{
	size_t cap = m->cpu.cap > 1 ? m->cpu.cap : 1;
	double *tv = malloc(cap * sizeof(double));
	double *vv = malloc(cap * sizeof(double));

	if (tv && vv) {
		eval_cpu(m, tv, vv);
		eval_mem(m, tv, vv);
		eval_threads(m, t, tv, vv);
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
