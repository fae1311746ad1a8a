/*
 * machine — every process on the box (see machine.h for the contract).
 *
 * Rows are struct machine_proc in one compact array (a gone process's row
 * takes the last one's place), indexed by pid through hashidx; threads seen
 * in D are a second compact array indexed by tid. Everything is read with
 * openat under one /proc directory fd kept open, and /proc and the task
 * directories are listed with getdents64 into buffers allocated once, so a
 * tick in the steady state allocates nothing.
 *
 * The budget: a known process's stat is read when it may have moved
 * (sampled, CPU at its last read, state D, R or Z, or a new inode for its
 * /proc entry: the dentry of a reused pid is a new one), or in its turn,
 * cfg.reads_per_tick rows a tick; quiet rows get a 0 % point. The CPU of a
 * row read after a pause is its average since its last read, so a daemon
 * read once in eight ticks shows no false spike.
 *
 * Verdicts are cheap for the many that do nothing: a row whose CPU series
 * holds no non-zero point, or whose RSS has not changed within the window,
 * needs no sort and no trend. The RSS trend (Theil-Sen, up to 256 points)
 * is the costly part: a tick recomputes it for at most
 * MACHINE_TRENDS_PER_TICK rows, in turn over those that moved by more than
 * the noise; machine_eval alone recomputes every row.
 *
 * Demand (proc/demand) is read for a few rows only: the busiest of those
 * that may hold a floor, after the stat files (whose CPU picks them); its
 * series and thread state exist while a row is among them. Their fine
 * steps (proc/finefloor) too, while their history is short.
 */
#include "stacktop/proc/machine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/dirstream.h"
#include "stacktop/lib/fdread.h"
#include "stacktop/lib/hashidx.h"
#include "stacktop/proc/boxstat.h"
#include "stacktop/proc/procstat.h"

#define MIB (1024.0 * 1024.0)
#define PROC_DIRBUF (32 * 1024)
#define TASK_DIRBUF (8 * 1024)
#define CMDLINE_TRIES 3
#define DEMAND_KEEP_S 10 /* a row's demand kept while it is not read */

/* A thread seen in state D. */
struct dthread {
	pid_t pid, tid;
	double since, seen_t;
};

struct machine {
	struct machine_config cfg;
	struct machine_proc *procs;
	size_t n, cap;
	struct hashidx ix; /* pid → row */
	struct dthread *dt;
	size_t ndt, dtcap;
	struct hashidx dix; /* tid → dthread */
	double now, prev_t; /* the latest tick or push, the one before (-inf: none) */
	double fine_t;	    /* the latest fine step that read a row */
	unsigned ticks;	    /* machine_tick calls */
	bool scouted;	    /* the first second's candidates looked for (fine_scout) */
	double boot_prev;   /* CLOCK_BOOTTIME at the last tick, seconds */
	size_t rot, task_rot, trend_rot;
	int procfd;
	struct boxstat box;
	struct dirstream proc_ds, task_ds;
	pid_t task_pid;
	int listed, untracked;
	double *sc_t, *sc_v; /* eval scratch, history_s points each */
	char *demand_buf;    /* task directories listed for the demand */
	double clk_tck, page;
};

/* ---- rows and their index ---- */

static bool row_hash(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct machine *m = ctx;

	if (id >= m->n)
		return false;
	*h = hashidx_mix64((uint64_t)m->procs[id].pid);
	return true;
}

static bool row_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct machine *m = ctx;

	return m->procs[id].pid == *(const pid_t *)key;
}

static struct machine_proc *row_find(const struct machine *m, pid_t pid)
{
	int64_t id = hashidx_find(&m->ix, hashidx_mix64((uint64_t)pid), row_eq, m, &pid, NULL);

	return id < 0 ? NULL : &m->procs[id];
}

/* Stop reading a row's demand: its points, threads and fine steps go. */
static void demand_drop(struct machine_proc *p)
{
	series_free(&p->demand);
	free(p->dm);
	free(p->fine);
	p->dm = NULL;
	p->fine = NULL;
	p->demand_pct = -1;
	p->demand_p10 = p->demand_p90 = 0;
}

/* Forget what was known of a row's process: a new one has its pid. */
static void row_reset(struct machine_proc *p)
{
	demand_drop(p);
	series_clear(&p->cpu);
	series_clear(&p->rss_series);
	p->read_t = -INFINITY;
	p->cpu_nz_t = -INFINITY;
	p->rss_chg_t = -INFINITY;
	p->prev_cpu_s = 0;
	p->moved = false;
	p->need_cmdline = CMDLINE_TRIES;
	p->cpu_pct = p->floor_pct = p->p90_pct = p->peak_pct = 0;
	p->rss_slope = 0;
	p->rss_kind = SERIES_FLAT;
	p->busy_floor = p->stairs = p->zombie = p->stuck = p->floor_fine = false;
	p->nfloor_tids = 0;
	p->uid = 0;
	p->comm[0] = p->cmdline[0] = p->cgroup[0] = '\0';
}

static struct machine_proc *row_add(struct machine *m, pid_t pid)
{
	struct machine_proc *p;

	if (m->n >= MACHINE_MAX)
		return NULL;
	if (hashidx_reserve(&m->ix, m->n, m->n, 256, row_hash, m) < 0 ||
	    !(p = array_slot((void **)&m->procs, &m->cap, m->n, sizeof(*p))))
		return NULL;
	if (series_init(&p->cpu, m->cfg.history_s) < 0 ||
	    series_init(&p->rss_series, m->cfg.history_s) < 0) {
		series_free(&p->cpu);
		return NULL;
	}
	p->pid = pid;
	row_reset(p);
	m->n++;
	hashidx_put(&m->ix, hashidx_mix64((uint64_t)pid), (uint32_t)(m->n - 1));
	return p;
}

static void row_remove(struct machine *m, size_t i)
{
	struct machine_proc *p = &m->procs[i];
	size_t last = m->n - 1;

	hashidx_unslot(&m->ix,
		       hashidx_slot_of(&m->ix, hashidx_mix64((uint64_t)p->pid), (uint32_t)i),
		       row_hash, m);
	series_free(&p->cpu);
	series_free(&p->rss_series);
	demand_drop(p);
	if (i != last) {
		size_t s = hashidx_slot_of(&m->ix, hashidx_mix64((uint64_t)m->procs[last].pid),
					   (uint32_t)last);
		hashidx_set(&m->ix, s, (uint32_t)i);
		*p = m->procs[last];
	}
	m->n--;
}

/* ---- threads in D ---- */

static bool dt_hash(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct machine *m = ctx;

	if (id >= m->ndt)
		return false;
	*h = hashidx_mix64((uint64_t)m->dt[id].tid);
	return true;
}

static bool dt_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct machine *m = ctx;

	return m->dt[id].tid == *(const pid_t *)key;
}

static struct dthread *dt_find(const struct machine *m, pid_t tid)
{
	int64_t id = hashidx_find(&m->dix, hashidx_mix64((uint64_t)tid), dt_eq, m, &tid, NULL);

	return id < 0 ? NULL : &m->dt[id];
}

static void dt_remove(struct machine *m, size_t i)
{
	size_t last = m->ndt - 1;

	hashidx_unslot(&m->dix,
		       hashidx_slot_of(&m->dix, hashidx_mix64((uint64_t)m->dt[i].tid), (uint32_t)i),
		       dt_hash, m);
	if (i != last) {
		size_t s = hashidx_slot_of(&m->dix, hashidx_mix64((uint64_t)m->dt[last].tid),
					   (uint32_t)last);
		hashidx_set(&m->dix, s, (uint32_t)i);
		m->dt[i] = m->dt[last];
	}
	m->ndt--;
}

/* tid of pid seen in D at t: a new one since since_t. At most MACHINE_MAX
 * of them are followed. */
static void dt_seen(struct machine *m, double t, pid_t pid, pid_t tid, double since_t)
{
	struct dthread *d = dt_find(m, tid);

	if (d && d->pid != pid) { /* the tid of a thread gone, reused */
		dt_remove(m, (size_t)(d - m->dt));
		d = NULL;
	}
	if (!d) {
		if (m->ndt >= MACHINE_MAX ||
		    hashidx_reserve(&m->dix, m->ndt, m->ndt, 64, dt_hash, m) < 0 ||
		    !(d = array_slot((void **)&m->dt, &m->dtcap, m->ndt, sizeof(*d))))
			return;
		*d = (struct dthread){.pid = pid, .tid = tid, .since = since_t};
		m->ndt++;
		hashidx_put(&m->dix, hashidx_mix64((uint64_t)tid), (uint32_t)(m->ndt - 1));
	}
	d->seen_t = t;
}

static void dt_forget(struct machine *m, pid_t tid)
{
	struct dthread *d = dt_find(m, tid);

	if (d)
		dt_remove(m, (size_t)(d - m->dt));
}

/* Every thread of pid (its process was replaced or went). */
static void dt_forget_pid(struct machine *m, pid_t pid)
{
	for (size_t i = m->ndt; i-- > 0;)
		if (m->dt[i].pid == pid)
			dt_remove(m, i);
}

static void tick_begin(struct machine *m, double t);

void machine_push_d_thread(struct machine *m, double t, pid_t pid, pid_t tid, double since_t)
{
	tick_begin(m, t);
	dt_seen(m, t, pid, tid, since_t);
}

/* ---- life cycle ---- */

void machine_config_default(struct machine_config *c)
{
	*c = (struct machine_config){.history_s = 60,
				     .busy_floor_pct = 5,
				     .stuck_s = 5,
				     .reads_per_tick = 256,
				     .task_reads_per_tick = 256,
				     .demand_reads_per_tick = 512};
}

int machine_new(const struct machine_config *cfg, struct machine **out)
{
	struct machine *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	if (cfg)
		m->cfg = *cfg;
	else
		machine_config_default(&m->cfg);
	if (m->cfg.history_s < MACHINE_MIN_S)
		m->cfg.history_s = MACHINE_MIN_S;
	m->now = m->prev_t = m->fine_t = -INFINITY;
	m->procfd = -1;
	int box = boxstat_init(&m->box);
	dirstream_init(&m->proc_ds);
	dirstream_init(&m->task_ds);
	m->proc_ds.size = PROC_DIRBUF;
	m->task_ds.size = TASK_DIRBUF;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	m->clk_tck = tck > 0 ? (double)tck : 100.0;
	m->page = page > 0 ? (double)page : 4096.0;
	m->sc_t = malloc(m->cfg.history_s * sizeof(double));
	m->sc_v = malloc(m->cfg.history_s * sizeof(double));
	m->proc_ds.buf = malloc(PROC_DIRBUF);
	m->task_ds.buf = malloc(TASK_DIRBUF);
	m->demand_buf = malloc(TASK_DIRBUF);
	if (!m->sc_t || !m->sc_v || !m->proc_ds.buf || !m->task_ds.buf || box || !m->demand_buf) {
		machine_free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void machine_free(struct machine *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		series_free(&m->procs[i].cpu);
		series_free(&m->procs[i].rss_series);
		demand_drop(&m->procs[i]);
	}
	dirstream_close(&m->proc_ds);
	dirstream_close(&m->task_ds);
	if (m->procfd >= 0)
		close(m->procfd);
	boxstat_free(&m->box);
	hashidx_free(&m->ix);
	hashidx_free(&m->dix);
	ARRAY_FREE_ALL(m->procs, m->dt, m->sc_t, m->sc_v, m->proc_ds.buf, m->task_ds.buf,
		       m->demand_buf, m);
}

void machine_set_sampled(struct machine *m, const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct machine_proc *p = row_find(m, pids[i]);

		if (p)
			p->sampled = true;
	}
}

/* ---- one reading ---- */

/* A new tick at t (pushes at one t are one tick). */
static void tick_begin(struct machine *m, double t)
{
	if (t > m->now) {
		m->prev_t = m->now;
		m->now = t;
	}
}

/* r at t into p: a point of CPU (the average since its last read; for a
 * first read, born: all its CPU in this tick, else none: a rate needs two
 * readings) and one of RSS. */
static void observe(struct machine *m, struct machine_proc *p, double t,
		    const struct machine_reading *r, bool born)
{
	double pct = 0, dt = t - m->prev_t;
	bool point = true;

	if (isfinite(p->read_t) && t > p->read_t)
		pct = (r->cpu_s - p->prev_cpu_s) / (t - p->read_t) * 100.0;
	else if (!isfinite(p->read_t) && born && isfinite(dt) && dt > 0)
		pct = r->cpu_s / dt * 100.0;
	else
		point = false;
	if (point) {
		pct = pct > 0 ? pct : 0;
		series_push(&p->cpu, t, pct);
		if (pct > 0)
			p->cpu_nz_t = t;
	}
	p->cpu_pct = pct > 0 ? pct : 0;
	p->moved = pct > 0;
	if (p->rss_series.len && (double)r->rss != series_last(&p->rss_series))
		p->rss_chg_t = t;
	series_push(&p->rss_series, t, (double)r->rss);
	p->ppid = r->ppid;
	p->state = r->state;
	p->kernel = r->kernel;
	p->nthreads = r->nthreads;
	p->rss = r->rss;
	p->start = r->start;
	memcpy(p->comm, r->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	p->prev_cpu_s = r->cpu_s;
	p->read_t = t;
	p->seen_t = t;
	/* The main thread's state is the process's: followed as a D thread. */
	if (r->state == 'D')
		dt_seen(m, t, r->pid, r->pid, t);
	else
		dt_forget(m, r->pid);
}

/* A row not read at t: listed, so alive; no CPU, its last RSS. */
static void quiet(struct machine_proc *p, double t)
{
	series_push(&p->cpu, t, 0);
	series_push(&p->rss_series, t, (double)p->rss);
	p->cpu_pct = 0;
	p->seen_t = t;
}

static void copy_text(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

int machine_push(struct machine *m, double t, const struct machine_reading *r, uid_t uid,
		 const char *cgroup, const char *cmdline)
{
	struct machine_proc *p = row_find(m, r->pid);

	tick_begin(m, t);
	if (p && p->start != r->start) {
		row_reset(p);
		dt_forget_pid(m, r->pid);
	} else if (p) {
		observe(m, p, t, r, false);
		return 0;
	} else if (!(p = row_add(m, r->pid))) {
		return m->n >= MACHINE_MAX ? -ENOSPC : -ENOMEM;
	}
	p->uid = uid;
	copy_text(p->cgroup, sizeof(p->cgroup), cgroup);
	copy_text(p->cmdline, sizeof(p->cmdline), cmdline);
	p->need_cmdline = 0;
	observe(m, p, t, r, false);
	return 0;
}

static void demand_point(struct machine *m, struct machine_proc *p, double t, double pct)
{
	if (!p->demand.cap && series_init(&p->demand, m->cfg.history_s) < 0)
		return;
	series_push(&p->demand, t, pct);
	p->demand_pct = pct;
}

int machine_push_fine(struct machine *m, double t, pid_t pid, const struct demand_step *st)
{
	struct machine_proc *p = row_find(m, pid);

	if (!p)
		return -ESRCH;
	if (!p->fine && !(p->fine = calloc(1, sizeof(*p->fine))))
		return -ENOMEM;
	finefloor_step(p->fine, t, st);
	return 0;
}

int machine_push_demand(struct machine *m, double t, pid_t pid, double pct)
{
	struct machine_proc *p = row_find(m, pid);

	if (!p)
		return -ESRCH;
	tick_begin(m, t);
	demand_point(m, p, t, pct);
	return p->demand.cap ? 0 : -ENOMEM;
}

/* ---- procfs ---- */

/* /proc/PID/NAME (tid 0) or /proc/PID/task/TID/NAME, at most size - 1
 * bytes, NUL-terminated: bytes read or -errno. */
static ssize_t proc_read(const struct machine *m, pid_t pid, pid_t tid, const char *name, char *buf,
			 size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (tid)
		snprintf(path, sizeof(path), "%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof(path), "%d/%s", (int)pid, name);
	if ((fd = openat(m->procfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fdread_at(fd, buf, size - 1, 0);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int read_stat(const struct machine *m, pid_t pid, struct machine_reading *r)
{
	char buf[1024];
	struct procstat_stat s;
	ssize_t n = proc_read(m, pid, 0, "stat", buf, sizeof(buf));
	int e;

	if (n < 0)
		return (int)n;
	if ((e = procstat_parse_stat_full(buf, &s)) < 0)
		return e;
	*r = (struct machine_reading){.pid = pid,
				      .ppid = s.ppid,
				      .state = s.state,
				      .cpu_s = s.cpu_s,
				      .rss = (uint64_t)((double)s.rss_pages * m->page),
				      .nthreads = s.nthreads > 0 ? (int)s.nthreads : 0,
				      .start = s.start,
				      .kernel = s.flags & PROCSTAT_PF_KTHREAD};
	memcpy(r->comm, s.comm, sizeof(r->comm));
	return 0;
}

/* The command line, NULs as spaces; once, and again after an exec (a new
 * comm). Deferred while the process is in D (it may hold its mm's lock,
 * which a read of cmdline waits for); read again while empty, up to
 * CMDLINE_TRIES reads (an exec caught half-way has no arguments yet). */
static void read_cmdline(const struct machine *m, struct machine_proc *p)
{
	ssize_t n;

	if (p->kernel || p->state == 'Z') {
		if (p->kernel)
			p->cmdline[0] = '\0';
		p->need_cmdline = 0; /* nothing to read */
		return;
	}
	if (p->state == 'D')
		return;
	if ((n = proc_read(m, p->pid, 0, "cmdline", p->cmdline, sizeof(p->cmdline))) < 0)
		n = 0;
	while (n > 0 && p->cmdline[n - 1] == '\0')
		n--;
	p->cmdline[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (p->cmdline[i] == '\0')
			p->cmdline[i] = ' ';
	p->need_cmdline = n > 0 ? 0 : p->need_cmdline - 1;
}

/* A process seen for the first time: its owner and cgroup. */
static void read_identity(const struct machine *m, struct machine_proc *p)
{
	char name[16], buf[4096];
	struct stat st;
	int v2;

	snprintf(name, sizeof(name), "%d", (int)p->pid);
	if (fstatat(m->procfd, name, &st, 0) == 0)
		p->uid = st.st_uid;
	if (proc_read(m, p->pid, 0, "cgroup", buf, sizeof(buf)) < 0 ||
	    procstat_parse_cgroup(buf, p->cgroup, sizeof(p->cgroup), &v2) < 0)
		p->cgroup[0] = '\0';
}

static double boottime_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Born since the last tick (its start, in clock ticks since boot, after
 * the boot time then): all its CPU belongs to this tick. */
static bool born_since(const struct machine *m, const struct machine_reading *r)
{
	return m->boot_prev > 0 && (double)r->start / m->clk_tck > m->boot_prev - 1.0 / m->clk_tck;
}

/* A listed pid not tracked yet. */
static void tick_new(struct machine *m, pid_t pid, double t)
{
	struct machine_reading r;
	struct machine_proc *p;

	if (m->n >= MACHINE_MAX) {
		m->untracked++; /* not read: the table is full */
		return;
	}
	if (read_stat(m, pid, &r) < 0)
		return; /* gone already */
	if (!(p = row_add(m, pid))) {
		m->untracked++;
		return;
	}
	observe(m, p, t, &r, born_since(m, &r));
	read_identity(m, p);
	read_cmdline(m, p);
}

/* A known row read at t. */
static void tick_read(struct machine *m, struct machine_proc *p, double t)
{
	struct machine_reading r;
	bool fresh;

	if (read_stat(m, p->pid, &r) < 0) {
		quiet(p, t); /* exiting: it will not be listed again */
		return;
	}
	if ((fresh = r.start != p->start)) {
		dt_forget_pid(m, p->pid);
		row_reset(p);
	} else if (strncmp(r.comm, p->comm, sizeof(p->comm)) != 0) {
		p->need_cmdline = CMDLINE_TRIES; /* an exec */
	}
	observe(m, p, t, &r, fresh && born_since(m, &r));
	if (fresh)
		read_identity(m, p);
	if (p->need_cmdline)
		read_cmdline(m, p);
}

/* Whether a known row is read whatever the budget. */
static bool must_read(const struct machine_proc *p, uint64_t ino)
{
	return p->sampled || p->moved || p->state == 'D' || p->state == 'R' || p->state == 'Z' ||
	       ino != p->ino;
}

/* Its turn among the quiet: reads_per_tick rows a tick from m->rot, of
 * the n known when the tick began. */
static bool in_turn(const struct machine *m, size_t i, size_t n)
{
	size_t k = m->cfg.reads_per_tick;

	return n <= k || (i + n - m->rot % n) % n < k;
}

/* /proc listed once (rewound): new pids read whole, known ones within
 * the budget. */
static void tick_list(struct machine *m, double t)
{
	const struct dirent64 *e;
	size_t known = m->n;

	dirstream_rewind(&m->proc_ds);
	m->listed = m->untracked = 0;
	while ((e = dirstream_next(&m->proc_ds))) {
		pid_t pid = dirstream_pid(e->d_name);
		struct machine_proc *p;

		if (!pid)
			continue;
		m->listed++;
		if (!(p = row_find(m, pid))) {
			tick_new(m, pid, t);
			if ((p = row_find(m, pid)))
				p->ino = e->d_ino;
			continue;
		}
		size_t i = (size_t)(p - m->procs);
		if (must_read(p, e->d_ino) || (i < known && in_turn(m, i, known)))
			tick_read(m, p, t);
		else
			quiet(p, t);
		p->ino = e->d_ino;
	}
	if (known)
		m->rot = (m->rot + m->cfg.reads_per_tick) % known;
}

/* ---- threads ---- */

static int task_state(const struct machine *m, pid_t pid, pid_t tid, char *state)
{
	char buf[1024];
	ssize_t n = proc_read(m, pid, tid, "stat", buf, sizeof(buf));

	return n < 0 ? (int)n : procstat_parse_stat(buf, state, NULL, NULL, 0);
}

/* Threads in D at their last read, read again (a main thread whose
 * process was read this tick was, with it). */
static void tick_d_threads(struct machine *m, double t)
{
	for (size_t i = m->ndt; i-- > 0;) {
		struct dthread *d = &m->dt[i];
		const struct machine_proc *p;
		char st;

		if (d->tid == d->pid && (p = row_find(m, d->pid)) && p->read_t == t)
			continue;
		if (task_state(m, d->pid, d->tid, &st) == 0 && st == 'D')
			d->seen_t = t;
		else
			dt_remove(m, i);
	}
}

/* The next process whose threads the rotation reads: user processes of
 * more than one thread (a single thread's state is its process's). At
 * most one pass over the rows a tick (*visited counts them). */
static bool task_next_dir(struct machine *m, size_t *visited)
{
	char path[32];

	while (*visited < m->n) {
		const struct machine_proc *p = &m->procs[m->task_rot++ % m->n];

		++*visited;

		if (p->kernel || p->nthreads <= 1 || p->state == 'Z')
			continue;
		snprintf(path, sizeof(path), "%d/task", (int)p->pid);
		int fd = openat(m->procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		m->task_ds.fd = fd;
		dirstream_rewind(&m->task_ds);
		m->task_pid = p->pid;
		return true;
	}
	return false;
}

/* task_reads_per_tick threads' stat files, in turn over the processes'
 * task directories (the one being read stays open between ticks). */
static void tick_tasks(struct machine *m, double t)
{
	unsigned budget = m->cfg.task_reads_per_tick;
	size_t visited = 0;

	while (budget > 0) {
		const struct dirent64 *e;

		if (m->task_ds.fd < 0) {
			if (!task_next_dir(m, &visited))
				return;
			budget--; /* an open, like a file's */
			continue;
		}
		if (!(e = dirstream_next(&m->task_ds))) {
			dirstream_close(&m->task_ds);
			continue;
		}
		pid_t tid = dirstream_pid(e->d_name);
		const struct dthread *d = tid ? dt_find(m, tid) : NULL;
		char st;

		if (!tid || (d && d->seen_t == t))
			continue; /* read this tick already */
		budget--;
		if (task_state(m, m->task_pid, tid, &st) == 0 && st == 'D')
			dt_seen(m, t, m->task_pid, tid, t);
	}
}

/* ---- demand ---- */

/* Whether row a goes before row b among those read: the most CPU now. */
static bool demand_before(const struct machine_proc *a, const struct machine_proc *b)
{
	return a->cpu_pct > b->cpu_pct;
}

/* The rows that may hold a floor (CPU now or floor >= busy_floor_pct;
 * user processes alive), the MACHINE_DEMAND_PROCS with the most CPU now,
 * into top (busiest first): how many. */
static size_t demand_pick(struct machine *m, size_t *top)
{
	double th = m->cfg.busy_floor_pct;
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct machine_proc *p = &m->procs[i];
		size_t j;

		if (p->kernel || p->state == 'Z' || (p->cpu_pct < th && p->floor_pct < th))
			continue;
		if (k < MACHINE_DEMAND_PROCS)
			j = k++;
		else if (demand_before(p, &m->procs[top[k - 1]]))
			j = k - 1; /* the last kept goes */
		else
			continue;
		for (; j > 0 && demand_before(p, &m->procs[top[j - 1]]); j--)
			top[j] = top[j - 1];
		top[j] = i;
	}
	return k;
}

/* Those rows' threads' schedstat, the busiest first, within
 * demand_reads_per_tick files (one that does not fit what is left waits
 * for the next tick, its state kept). A row not picked keeps its demand
 * for DEMAND_KEEP_S (more than MACHINE_DEMAND_PROCS that may hold a floor
 * take turns: each keeps its points, its next read gives its rate since
 * the last), then loses it. */
static void tick_demand(struct machine *m, double t)
{
	size_t top[MACHINE_DEMAND_PROCS], k = demand_pick(m, top);
	unsigned budget = m->cfg.demand_reads_per_tick;

	for (size_t i = 0; i < m->n; i++)
		m->procs[i].demand_due = false;
	for (size_t i = 0; i < k; i++) {
		m->procs[top[i]].demand_due = true;
		m->procs[top[i]].demand_t = t;
	}
	for (size_t i = 0; i < m->n; i++) {
		struct machine_proc *p = &m->procs[i];

		if (!p->demand_due && (p->dm || p->demand.cap) &&
		    !(t - p->demand_t <= DEMAND_KEEP_S))
			demand_drop(p);
	}
	for (size_t i = 0; i < k; i++) {
		struct machine_proc *p = &m->procs[top[i]];
		int nt = p->nthreads > 1 ? p->nthreads : 1;
		unsigned cost =
		    (unsigned)(nt < MACHINE_DEMAND_THREADS ? nt : MACHINE_DEMAND_THREADS);
		unsigned files = 0;
		struct demand_step st;

		cost += nt > 1; /* its task directory */
		if (cost > budget || (!p->dm && !(p->dm = calloc(1, sizeof(*p->dm)))))
			continue;
		if (demand_read(m->procfd, p->pid, nt, p->dm, m->demand_buf, TASK_DIRBUF, &st,
				&files) == 1)
			demand_point(m, p, t, st.pct);
		budget -= files < budget ? files : budget;
	}
}

/* ---- fine steps ---- */

/* Whether a row's fine steps are read: not while its history decides
 * (MACHINE_MIN_S points of CPU and of demand); a floor candidate read at
 * the last tick, or, before its first CPU point, one the scout found. */
static bool fine_wanted(const struct machine_proc *p)
{
	if (p->kernel || p->state == 'Z' ||
	    (p->cpu.len >= MACHINE_MIN_S && p->demand.len >= MACHINE_MIN_S))
		return false;
	return p->demand_due || (p->fine_scout && !p->cpu.len);
}

/* The first tick knows no CPU (a rate needs two reads), and the samples
 * come late while ingest loads every process: once, a step after it, the
 * stat of every row without a CPU point read again (as the first tick
 * did), and those whose CPU since may hold a floor are fine candidates
 * from then on, not from the second tick. */
static void fine_scout(struct machine *m, double t)
{
	struct machine_reading r;

	m->scouted = true;
	for (size_t i = 0; i < m->n; i++) {
		struct machine_proc *p = &m->procs[i];

		if (p->cpu.len || p->kernel || !isfinite(p->read_t) || t <= p->read_t ||
		    read_stat(m, p->pid, &r) < 0 || r.start != p->start)
			continue;
		p->fine_scout =
		    (r.cpu_s - p->prev_cpu_s) / (t - p->read_t) * 100.0 >= m->cfg.busy_floor_pct;
	}
}

/* One fine step: the rows read already first (their steps go on), then
 * new ones; MACHINE_DEMAND_PROCS rows and MACHINE_FINE_FILES files at
 * most (a row that does not fit keeps its state: its next step is
 * longer). Rows no longer wanted lose their steps. */
static void fine_pass(struct machine *m, double t)
{
	unsigned budget = MACHINE_FINE_FILES;
	size_t rows = 0;

	m->fine_t = t;
	if (!m->scouted && m->ticks == 1 && t - m->now >= MACHINE_FINE_STEP_S)
		fine_scout(m, t);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->n; i++) {
			struct machine_proc *p = &m->procs[i];
			int nt = p->nthreads > 1 ? p->nthreads : 1;
			unsigned files = 0,
				 cost = (unsigned)(nt < DEMAND_THREADS ? nt : DEMAND_THREADS);

			if (!fine_wanted(p)) {
				if (p->fine) {
					free(p->fine);
					p->fine = NULL;
				}
				continue;
			}
			cost++; /* its task directory */
			if ((pass == 0) != (p->fine != NULL) || rows >= MACHINE_DEMAND_PROCS ||
			    cost > budget || (!p->fine && !(p->fine = calloc(1, sizeof(*p->fine)))))
				continue;
			rows++;
			finefloor_read(m->procfd, p->pid, p->fine, m->demand_buf, TASK_DIRBUF, t,
				       &files);
			budget -= files < budget ? files : budget;
		}
	}
}

void machine_fine(struct machine *m, double t)
{
	/* the first step is the scout's, a step after the first tick */
	if (m->procfd >= 0 && t - m->fine_t >= MACHINE_FINE_STEP_S * 0.9 &&
	    (m->ticks > 1 || t - m->now >= MACHINE_FINE_STEP_S))
		fine_pass(m, t);
}

static void eval(struct machine *m, size_t trends);

int machine_tick(struct machine *m, double t)
{
	if (m->procfd < 0 && (m->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		m->procfd = -1;
		return -errno;
	}
	if (m->proc_ds.fd < 0 &&
	    (m->proc_ds.fd = openat(m->procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		m->proc_ds.fd = -1;
		return -errno;
	}
	/* Nothing changes when /proc cannot be listed (all would be gone). */
	if (lseek(m->proc_ds.fd, 0, SEEK_SET) < 0)
		return -errno;
	double boot = boottime_s();
	m->ticks++;
	tick_begin(m, t);
	tick_list(m, t);
	tick_d_threads(m, t);
	tick_tasks(m, t);
	tick_demand(m, t);
	/* a step that ends with the second: its verdict sees up to now */
	if (t - m->fine_t >= MACHINE_FINE_STEP_S / 2)
		fine_pass(m, t);
	boxstat_read(&m->box, m->procfd);
	m->boot_prev = boot;
	for (size_t i = 0; i < m->n; i++)
		m->procs[i].sampled = false;
	eval(m, MACHINE_TRENDS_PER_TICK);
	return 0;
}

/* ---- verdicts ---- */

/* Rows not seen at the latest tick are gone; so are D threads. */
static void sweep(struct machine *m)
{
	for (size_t i = m->n; i-- > 0;)
		if (m->procs[i].seen_t < m->now) {
			if (m->procs[i].pid == m->task_pid)
				dirstream_close(&m->task_ds);
			row_remove(m, i);
		}
	for (size_t i = m->ndt; i-- > 0;)
		if (m->dt[i].seen_t < m->now || !row_find(m, m->dt[i].pid))
			dt_remove(m, i);
}

/* The time of a series' oldest point (+inf when empty). */
static double oldest_t(const struct series *s)
{
	return s->len ? s->t[s->head] : INFINITY;
}

/* The demand's p10 and p90: how many points. */
static size_t eval_demand(struct machine *m, struct machine_proc *p)
{
	size_t n = series_get(&p->demand, NULL, m->sc_v, m->cfg.history_s);

	p->demand_p10 = p->demand_p90 = 0;
	if (!n)
		return 0;
	series_sort(m->sc_v, n);
	p->demand_p10 = series_percentile_sorted(m->sc_v, n, 0.1);
	p->demand_p90 = series_percentile_sorted(m->sc_v, n, 0.9);
	return n;
}

/* A short history's floor, from the fine steps once they span
 * MACHINE_FINE_MIN_S (finefloor: the CPU in the pauses of the threads
 * that both work and sleep). */
static void eval_fine(const struct machine *m, struct machine_proc *p)
{
	struct finefloor_verdict v;

	finefloor_eval(p->fine, &v);
	if (v.span_s < MACHINE_FINE_MIN_S)
		return;
	p->floor_fine = true;
	p->floor_pct = v.floor_pct;
	p->busy_floor = v.pauses && v.floor_pct >= m->cfg.busy_floor_pct;
	for (size_t i = 0; p->busy_floor && i < v.nholders; i++)
		p->floor_tids[p->nfloor_tids++] = v.holder[i];
}

/* The floor is the CPU's; whether it is a busy floor, the demand's: a
 * steady worker starved by others has a CPU that wanders but a flat
 * demand; a floor-holder's demand bursts above what never sleeps. Until
 * the history holds MACHINE_MIN_S points of both, the fine steps'. */
static void eval_cpu(struct machine *m, struct machine_proc *p)
{
	size_t nd = eval_demand(m, p), n = 0;

	p->floor_pct = p->p90_pct = p->peak_pct = 0;
	p->busy_floor = p->floor_fine = false;
	p->nfloor_tids = 0;
	if (p->cpu_nz_t >= oldest_t(&p->cpu)) { /* else all zero (or empty): no sort */
		n = series_get(&p->cpu, m->sc_t, m->sc_v, m->cfg.history_s);
		series_sort(m->sc_v, n);
		p->floor_pct = series_percentile_sorted(m->sc_v, n, 0.1);
		p->p90_pct = series_percentile_sorted(m->sc_v, n, 0.9);
		p->peak_pct = m->sc_v[n - 1];
	}
	if (p->cpu.len >= MACHINE_MIN_S && nd >= MACHINE_MIN_S)
		p->busy_floor = p->floor_pct >= m->cfg.busy_floor_pct &&
				p->demand_p90 >= p->demand_p10 + MACHINE_BURST_PTS;
	else if (p->fine)
		eval_fine(m, p);
}

/* The RSS trend: flat at no cost when the series did not move by more
 * than the noise; else series_trend when trend is set. */
static void eval_rss(struct machine *m, struct machine_proc *p, size_t *trends)
{
	struct series_trend tr;
	size_t n = 0;

	/* Unchanged since its oldest point: all equal, no copy. */
	if (p->rss_chg_t > oldest_t(&p->rss_series))
		n = series_get(&p->rss_series, m->sc_t, m->sc_v, m->cfg.history_s);
	if (n >= 2 && series_max(m->sc_v, n) - series_min(m->sc_v, n) > MIB) {
		if (!*trends)
			return; /* its last verdict stands until its turn */
		--*trends;
		series_trend(m->sc_t, m->sc_v, n, MIB, &tr);
		p->rss_slope = tr.slope;
		p->rss_kind = tr.kind;
		p->stairs = tr.kind == SERIES_STAIRS && n >= MACHINE_MIN_S;
		return;
	}
	p->rss_slope = 0;
	p->rss_kind = SERIES_FLAT;
	p->stairs = false;
}

static void eval(struct machine *m, size_t trends)
{
	sweep(m);
	size_t n = m->n, start = n ? m->trend_rot % n : 0;

	for (size_t k = 0; k < n; k++) {
		size_t i = (start + k) % n, before = trends;
		struct machine_proc *p = &m->procs[i];

		eval_cpu(m, p);
		eval_rss(m, p, &trends);
		if (before && !trends)
			m->trend_rot = i + 1; /* the next tick starts after it */
		p->zombie = p->state == 'Z';
		p->zombie_children = p->stuck_threads = 0;
		p->stuck_for_s = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct machine_proc *parent;

		if (m->procs[i].zombie && (parent = row_find(m, m->procs[i].ppid)))
			parent->zombie_children++;
	}
	for (size_t i = 0; i < m->ndt; i++) {
		struct machine_proc *p = row_find(m, m->dt[i].pid);
		double held = m->now - m->dt[i].since;

		if (p && held >= m->cfg.stuck_s) {
			p->stuck_threads++;
			if (held > p->stuck_for_s)
				p->stuck_for_s = held;
		}
	}
	for (size_t i = 0; i < n; i++)
		m->procs[i].stuck = m->procs[i].stuck_threads > 0;
}

void machine_eval(struct machine *m)
{
	eval(m, SIZE_MAX);
}

/* ---- queries ---- */

const struct machine_proc *machine_procs(const struct machine *m, size_t *n)
{
	*n = m->n;
	return m->procs;
}

const struct machine_proc *machine_find(const struct machine *m, pid_t pid)
{
	return row_find(m, pid);
}

static int by_cgroup(const void *a, const void *b)
{
	const struct machine_proc *x = *(const struct machine_proc *const *)a;
	const struct machine_proc *y = *(const struct machine_proc *const *)b;

	return strcmp(x->cgroup, y->cgroup);
}

static int by_cpu(const void *a, const void *b)
{
	const struct machine_group *x = a, *y = b;

	return ARRAY_CMP(y->cpu_pct, x->cpu_pct) ?: strcmp(x->cgroup, y->cgroup);
}

size_t machine_groups(const struct machine *m, struct machine_group *out, size_t max)
{
	const struct machine_proc **rows = malloc(m->n * sizeof(*rows) + 1);
	struct machine_group *g = malloc(m->n * sizeof(*g) + 1);
	size_t ng = 0;

	if (!rows || !g) {
		ARRAY_FREE_ALL(rows, g);
		return 0;
	}
	for (size_t i = 0; i < m->n; i++)
		rows[i] = &m->procs[i];
	qsort(rows, m->n, sizeof(*rows), by_cgroup);
	const struct machine_proc *hot = NULL; /* the current group's hottest */
	for (size_t i = 0; i < m->n; i++) {
		const struct machine_proc *p = rows[i];

		if (!ng || strcmp(g[ng - 1].cgroup, p->cgroup)) {
			g[ng++] = (struct machine_group){.cgroup = p->cgroup};
			hot = NULL;
		}
		struct machine_group *cur = &g[ng - 1];
		if (!hot || p->cpu_pct > hot->cpu_pct)
			cur->hottest = (hot = p)->pid;
		cur->nprocs++;
		cur->cpu_pct += p->cpu_pct;
		cur->rss += p->rss;
	}
	qsort(g, ng, sizeof(*g), by_cpu);
	if (out && max)
		memcpy(out, g, (ng < max ? ng : max) * sizeof(*g));
	ARRAY_FREE_ALL(rows, g);
	return ng;
}

void machine_get_totals(const struct machine *m, struct machine_totals *out)
{
	*out = (struct machine_totals){.ncpu = m->box.ncpu,
				       .cpu_pct = m->box.cpu_pct,
				       .mem_used = m->box.mem_used,
				       .mem_total = m->box.mem_total};
	out->nprocs = m->procfd >= 0 ? m->listed : (int)m->n;
	out->untracked = m->untracked;
	out->nthreads = 0;
	for (size_t i = 0; i < m->n; i++)
		out->nthreads += m->procs[i].nthreads;
}
