/*
 * view_procs — the process table of the whole machine (see view_procs.h).
 *
 * view_procs_update copies the numbers of every process into rows (or
 * sums them by cgroup), sorts them, keeps the selection on the followed
 * process or group and fills the texts of the rows on screen only: the
 * user's name (getpwuid_r, cached per uid), the command, the sparkline's
 * last 30 points and the hottest function (one window_top by process for
 * all of them). So a box of 2,000 sleeping processes costs a copy and a
 * sort a tick, and names only what is drawn. view_procs_render lays the
 * columns out for the grid (view_procs.h: what goes first) and draws.
 *
 * The alerts line (procwords_alerts) is built from the same numbers by
 * update and drawn above the table; the top view shows it too (ui.c).
 */
#include "stacktop/ui/view_procs.h"

#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/lib/text.h"
#include "stacktop/model/window.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/ui/procwords.h"
#include "stacktop/ui/spark.h"

#define USER_W 8
#define CPU_W 6	  /* " 95.0%", " 180%" */
#define FLOOR_W 5 /* "FLOOR", " 31%" */
#define RSS_W 5	  /* "1023M" */
#define THR_W 4
#define TREND_W 10 /* "↑2.1M/min" */
#define ZD_W 5	   /* "Z3 D1" */
#define HOT_MIN 12
#define HOT_MAX 28
#define SPARK_MIN 10
#define CMD_MIN 10
#define CG_W 22	    /* the cgroup's last part: a container or a service */
#define CMD_ROOM 40 /* the command keeps this much before a CGROUP column */
#define VERDICT_MAX 30
#define VERDICT_NARROW 15 /* under 120 columns: "busy floor 31%" */

static const char *const sort_names[VIEW_PROCS_SORT_COUNT] = {"cpu", "floor", "rss", "pid", "name"};

const char *view_procs_sort_name(enum view_procs_sort s)
{
	return s >= 0 && s < VIEW_PROCS_SORT_COUNT ? sort_names[s] : "cpu";
}

/* ---- rows ----------------------------------------------------------------- */

static int cmp_desc(double a, double b)
{
	return a > b ? -1 : a < b;
}

static int cmp_pid(pid_t a, pid_t b)
{
	return a < b ? -1 : a > b;
}

/* Figures compared as shown (one decimal): rows that read the same keep
 * their order (by pid) instead of swapping each second. */
static int cmp_shown(double a, double b)
{
	return cmp_desc((double)lround(a * 10), (double)lround(b * 10));
}

/* Among rows that read the same (most of a box: 0.0% CPU), the ones with
 * a verdict first, then the programs, then kernel threads: a stuck or
 * leaking process must not sink under a hundred idle kworkers. */
static int rank_of(const struct view_procs_row *r)
{
	if (r->stuck || r->busy_floor || r->stairs || r->zombie || r->zombie_children)
		return 0;
	return r->kernel ? 2 : 1;
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct view_procs_row *a = pa, *b = pb;
	enum view_procs_sort s = *(const enum view_procs_sort *)arg;
	int r = 0;

	switch (s) {
	case VIEW_PROCS_SORT_FLOOR:
		if (!(r = cmp_shown(a->floor_pct, b->floor_pct)))
			r = cmp_shown(a->cpu_pct, b->cpu_pct);
		break;
	case VIEW_PROCS_SORT_RSS:
		r = a->rss > b->rss ? -1 : a->rss < b->rss;
		break;
	case VIEW_PROCS_SORT_PID:
		break;
	case VIEW_PROCS_SORT_NAME:
		r = a->group ? strcmp(a->cgroup, b->cgroup) : strcmp(a->comm, b->comm);
		break;
	case VIEW_PROCS_SORT_CPU:
	default:
		if (!(r = cmp_shown(a->cpu_pct, b->cpu_pct)))
			r = cmp_shown(a->floor_pct, b->floor_pct);
		break;
	}
	if (!r && s != VIEW_PROCS_SORT_PID && s != VIEW_PROCS_SORT_NAME)
		r = rank_of(a) - rank_of(b);
	if (!r && a->group)
		r = strcmp(a->cgroup, b->cgroup);
	return r ? r : cmp_pid(a->pid, b->pid);
}

static void row_of(const struct machine_proc *p, struct view_procs_row *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = p->pid;
	r->ppid = p->ppid;
	r->uid = p->uid;
	r->state = p->state;
	r->kernel = p->kernel;
	r->nprocs = 1;
	r->nthreads = p->nthreads;
	r->zombie_children = p->zombie_children;
	r->stuck_threads = p->stuck_threads;
	r->cpu_pct = p->cpu_pct;
	r->floor_pct = p->floor_pct;
	r->stuck_for_s = p->stuck_for_s;
	r->rss = p->rss;
	r->rss_slope = p->rss_slope;
	r->rss_kind = p->rss_kind;
	r->busy_floor = p->busy_floor;
	r->stairs = p->stairs;
	r->zombie = p->zombie;
	r->stuck = p->stuck;
	memcpy(r->comm, p->comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", p->cgroup);
}

/* Add a process into its group's row (sums; the busiest member named). */
static void group_add(struct view_procs_row *g, const struct view_procs_row *m)
{
	if (!g->nprocs || m->cpu_pct > g->spark[0]) {
		/* spark[0] holds the busiest member's CPU while summing */
		g->spark[0] = m->cpu_pct;
		g->pid = m->pid;
		memcpy(g->comm, m->comm, sizeof(g->comm));
	}
	g->group = true;
	g->nprocs++;
	g->nthreads += m->nthreads;
	g->zombie_children += m->zombie_children;
	g->stuck_threads += m->stuck_threads;
	g->cpu_pct += m->cpu_pct;
	g->floor_pct += m->floor_pct;
	g->rss += m->rss;
	g->rss_slope += m->rss_slope;
	if (m->stuck_for_s > g->stuck_for_s)
		g->stuck_for_s = m->stuck_for_s;
	g->busy_floor |= m->busy_floor;
	g->stairs |= m->stairs;
	g->stuck |= m->stuck;
}

static int cmp_cgroup(const void *pa, const void *pb)
{
	const struct view_procs_row *a = pa, *b = pb;
	int r = strcmp(a->cgroup, b->cgroup);

	return r ? r : cmp_pid(a->pid, b->pid);
}

/* Grouped: a row per cgroup, sorted, and the open group's members (sorted
 * the same way) right under it. *out malloc'd. */
static int group_rows(struct view_procs_state *st, struct view_procs_row *procs, size_t n,
		      struct view_procs_row **out, size_t *nout)
{
	struct view_procs_row *g, *res;
	size_t ng = 0, i, k = 0, first_open = n, nopen = 0;

	qsort(procs, n, sizeof(*procs), cmp_cgroup);
	if (!(g = calloc(n + 1, sizeof(*g))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!ng || strcmp(g[ng - 1].cgroup, procs[i].cgroup) != 0) {
			snprintf(g[ng].cgroup, sizeof(g[ng].cgroup), "%s", procs[i].cgroup);
			ng++;
		}
		group_add(&g[ng - 1], &procs[i]);
		if (st->open[0] && strcmp(procs[i].cgroup, st->open) == 0) {
			if (first_open == n)
				first_open = i;
			nopen++;
		}
	}
	for (i = 0; i < ng; i++)
		g[i].spark[0] = 0;
	qsort_r(g, ng, sizeof(*g), row_cmp, &st->sort);
	if (!nopen)
		st->open[0] = '\0';
	else
		qsort_r(procs + first_open, nopen, sizeof(*procs), row_cmp, &st->sort);
	if (!(res = calloc(ng + nopen + 1, sizeof(*res)))) {
		free(g);
		return -ENOMEM;
	}
	for (i = 0; i < ng; i++) {
		res[k++] = g[i];
		if (nopen && strcmp(g[i].cgroup, st->open) == 0)
			for (size_t j = 0; j < nopen; j++) {
				res[k] = procs[first_open + j];
				res[k++].member = true;
			}
	}
	free(g);
	*out = res;
	*nout = k;
	return 0;
}

/* ---- texts of the rows on screen ---------------------------------------- */

static void user_name(struct view_procs_state *st, uid_t uid, char *out, size_t size)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	int i;

	for (i = 0; i < st->nusers; i++)
		if (st->users[i].uid == uid) {
			snprintf(out, size, "%s", st->users[i].name);
			return;
		}
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
		snprintf(out, size, "%s", res->pw_name);
	else
		snprintf(out, size, "%u", (unsigned)uid);
	i = st->nusers < (int)(sizeof(st->users) / sizeof(st->users[0])) ? st->nusers++
									 : (int)(uid % 64);
	st->users[i].uid = uid;
	snprintf(st->users[i].name, sizeof(st->users[i].name), "%s", out);
}

/* The last VIEW_PROCS_SPARK points of s, oldest first, right-aligned
 * (missing points < 0). */
static void spark_points(const struct series *s, double *out)
{
	size_t n = s ? s->len : 0, k;
	double *v;

	for (k = 0; k < VIEW_PROCS_SPARK; k++)
		out[k] = -1;
	if (!n || !(v = malloc(n * sizeof(*v))))
		return;
	n = series_get(s, NULL, v, n);
	k = n < VIEW_PROCS_SPARK ? n : VIEW_PROCS_SPARK;
	memcpy(out + VIEW_PROCS_SPARK - k, v + n - k, k * sizeof(*v));
	free(v);
}

static int cmp_top_pid(const void *pa, const void *pb)
{
	const struct window_top_row *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return a->frame < b->frame ? -1 : a->frame > b->frame;
}

/* Each shown row's hottest function: one query by process for them all,
 * then the row with the most own samples of each pid. */
static int fill_hottest(struct view_procs_state *st, struct window *w, int from, int to)
{
	struct window_top_query q = {
	    .key = WINDOW_KEY_FUNCTION, .hide_kernel = st->hide_kernel, .by_process = true};
	struct window_top_row *rows = NULL, key = {0}, *hit;
	uint64_t total = 0;
	size_t n = 0;
	int err;

	if (!w)
		return 0;
	if ((err = window_top(w, &q, &rows, &n, &total)))
		return err;
	qsort(rows, n, sizeof(*rows), cmp_top_pid);
	for (int i = from; i < to; i++) {
		struct view_procs_row *r = &st->rows[i];
		const struct frame *f;

		key.pid = r->pid;
		hit = NULL;
		/* The first row of the pid is its hottest (sorted by self). */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (rows[mid].pid < key.pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && rows[lo].pid == key.pid && rows[lo].self)
			hit = &rows[lo];
		if (hit && (f = frames_get(window_frames(w), hit->frame)))
			procwords_func(f, st->full_names, r->hottest, sizeof(r->hottest));
	}
	free(rows);
	return 0;
}

static void fill_texts(struct view_procs_state *st, const struct machine_proc *p, size_t n,
		       int from, int to)
{
	for (int i = from; i < to; i++) {
		struct view_procs_row *r = &st->rows[i];
		const struct machine_proc *mp = procwords_find(p, n, r->pid);
		const struct machine_proc *pp;

		r->filled = true;
		if (r->group) { /* no series of its own */
			for (int k = 0; k < VIEW_PROCS_SPARK; k++)
				r->spark[k] = -1;
			continue;
		}
		user_name(st, r->uid, r->user, sizeof(r->user));
		if (mp) {
			snprintf(r->cmd, sizeof(r->cmd), "%s", mp->cmdline);
			spark_points(&mp->cpu, r->spark);
		}
		if (r->zombie && (pp = procwords_find(p, n, r->ppid)))
			snprintf(r->parent, sizeof(r->parent), "%s", pp->comm);
	}
}

/* ---- the filter (key /) ------------------------------------------------------ */

static const char *filter_of(const struct view_procs_state *st)
{
	return st->editing ? st->edit : st->filter;
}

/* Does the process hold f in its comm, command line or pid (the case of
 * letters aside)? Everything matches "". */
static bool proc_matches(const struct machine_proc *p, const char *f)
{
	char pid[16];

	if (!f[0])
		return true;
	snprintf(pid, sizeof(pid), "%d", (int)p->pid);
	return strcasestr(p->comm, f) || strcasestr(p->cmdline, f) || strstr(pid, f);
}

/* The filter changed: the selection starts again at the first row. */
static void filter_changed(struct view_procs_state *st)
{
	st->selected = st->scroll = 0;
	st->moved = false; /* on the busiest match until a key moves it */
	st->follow_pid = 0;
	st->follow_group[0] = '\0';
}

/* ---- update -------------------------------------------------------------- */

/* Batch: past the limit's rows, the ones with a verdict come next (as many
 * again at most), so a log shows the stuck, leaking or zombie process a
 * busy box pushes under its busiest 20; st->extra says how many. */
static void batch_verdicts(struct view_procs_state *st)
{
	int k, i;

	st->extra = 0;
	if (!st->batch || st->limit <= 0 || st->nrows <= st->limit || st->grouped)
		return;
	for (i = k = st->limit; i < st->nrows && st->extra < st->limit; i++) {
		struct view_procs_row r = st->rows[i];

		if (rank_of(&r) != 0)
			continue;
		memmove(&st->rows[k + 1], &st->rows[k], (size_t)(i - k) * sizeof(r));
		st->rows[k++] = r;
		st->extra++;
	}
}

/* The alerts' rows: one on screen (fitted, "+N more"), every alert in
 * batch (wrapped). */
static int alerts_rows(const struct view_procs_state *st, int cols)
{
	if (!st->alerts[0])
		return 0;
	return st->batch ? view_alerts_wrap(NULL, 0, cols, st->alerts, 0) : 1;
}

static int table_y(const struct view_procs_state *st, const struct view_header *h, int cols)
{
	return (h ? view_header_height(h) : 0) + alerts_rows(st, cols);
}

/* Table rows under the column header on a grid of cols x rows. */
static int table_rows(const struct view_procs_state *st, const struct view_header *h, int cols,
		      int rows)
{
	int vis = rows - (st->batch ? 0 : 1) - table_y(st, h, cols) - 1;

	if (st->batch && st->limit > 0 && vis > st->limit + st->extra)
		vis = st->limit + st->extra;
	return vis < 0 ? 0 : vis;
}

static void clamp_selection(struct view_procs_state *st, int vis)
{
	int i, n = st->nrows;

	for (i = 0; st->moved && i < n && (st->follow_pid || st->follow_group[0]); i++) {
		const struct view_procs_row *r = &st->rows[i];
		if (r->group ? st->follow_group[0] && !strcmp(r->cgroup, st->follow_group)
			     : !st->follow_group[0] && r->pid == st->follow_pid) {
			st->selected = i;
			break;
		}
	}
	if (st->batch)
		st->selected = st->scroll = 0;
	view_clamp_selection(&st->selected, &st->scroll, n, vis);
	st->follow_pid = 0;
	st->follow_group[0] = '\0';
	st->selected_pid = 0;
	if (!n)
		return;
	if (st->rows[st->selected].group) {
		snprintf(st->follow_group, sizeof(st->follow_group), "%s",
			 st->rows[st->selected].cgroup);
	} else {
		st->follow_pid = st->rows[st->selected].pid;
		st->selected_pid = st->follow_pid;
	}
}

int view_procs_update(struct view_procs_state *st, const struct view_header *h,
		      const struct machine_proc *p, size_t n, struct window *w, int cols, int rows)
{
	struct view_procs_row *r, *kept;
	const char *f = filter_of(st);
	size_t nk = 0, i;
	int err, to;

	err = procwords_floors(st, p, n, w);
	procwords_alerts(p, n, st, st->batch ? 0 : cols, st->alerts, sizeof(st->alerts));
	if (err)
		return err;
	if (!st->batch && (cols < VIEW_MIN_W || rows < VIEW_MIN_H)) {
		st->page = 0;
		return 0;
	}
	if (!(r = calloc(n + 1, sizeof(*r))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!proc_matches(&p[i], f))
			continue;
		row_of(&p[i], &r[nk]);
		if (r[nk].busy_floor)
			snprintf(r[nk].floor_func, sizeof(r[nk].floor_func), "%s",
				 procwords_floor_of(st, r[nk].pid));
		nk++;
	}
	st->nprocs = (int)n;
	st->nmatched = (int)nk;
	if (st->grouped) {
		err = group_rows(st, r, nk, &kept, &nk);
		free(r);
		if (err)
			return err;
	} else {
		qsort_r(r, nk, sizeof(*r), row_cmp, &st->sort);
		kept = r;
	}
	free(st->rows);
	st->rows = kept;
	st->nrows = (int)nk;
	batch_verdicts(st);
	st->page = table_rows(st, h, cols, rows);
	clamp_selection(st, st->page);
	to = st->scroll + st->page < st->nrows ? st->scroll + st->page : st->nrows;
	fill_texts(st, p, n, st->scroll, to);
	err = fill_hottest(st, w, st->scroll, to);
	return err;
}

void view_procs_state_free(struct view_procs_state *st)
{
	free(st->rows);
	st->rows = NULL;
	st->nrows = 0;
}

/* ---- words ------------------------------------------------------------------ */

/* "412M", "1.2G", "980K", "0": bytes in at most 5 columns. */
static void short_bytes(double b, char *out, size_t size)
{
	const double k = 1024, m = k * k, g = m * k;

	if (b < 0)
		b = -b;
	if (b < k)
		snprintf(out, size, "%.0fB", b);
	else if (b < m)
		snprintf(out, size, "%.0fK", b / k);
	else if (b < 10 * m)
		snprintf(out, size, "%.1fM", b / m);
	else if (b < g)
		snprintf(out, size, "%.0fM", b / m);
	else if (b < 10 * g)
		snprintf(out, size, "%.1fG", b / g);
	else
		snprintf(out, size, "%.0fG", b / g);
}

/* Memory on the move: "↑2.1M/min" ("+2.1M/min" in ASCII); "" when flat. */
static void trend_text(const struct view_procs_row *r, bool utf8, char *out, size_t size)
{
	double per_min = r->rss_slope * 60;
	char b[16];

	out[0] = '\0';
	if (r->rss_kind != SERIES_STAIRS && !r->stairs && fabs(per_min) < 1024.0 * 1024)
		return;
	if (fabs(per_min) < 1024)
		return;
	short_bytes(per_min, b, sizeof(b));
	snprintf(out, size, "%s%s/min",
		 per_min > 0 ? (utf8 ? "\xe2\x86\x91" : "+") : (utf8 ? "\xe2\x86\x93" : "-"), b);
}

/* The row's verdicts, most urgent first, two spaces apart; *attr: the
 * colour of the first. brief (under 120 columns): "zombie of 4259", "3
 * zombies" (the alerts line names the parent). Raw text (a parent's
 * name): escape it. */
static void verdict_text(const struct view_procs_row *r, bool brief, char *out, size_t size,
			 uint16_t *attr)
{
	char d[32];
	size_t o = 0;

	out[0] = '\0';
	*attr = GRID_BOLD;
#define ADD(a, ...)                                                                                \
	do {                                                                                       \
		if (!o)                                                                            \
			*attr = (a);                                                               \
		if (o < size)                                                                      \
			o += (size_t)snprintf(out + o, size - o, "%s", o ? "  " : "");             \
		if (o < size)                                                                      \
			o += (size_t)snprintf(out + o, size - o, __VA_ARGS__);                     \
	} while (0)
	if (r->stuck) {
		text_span(r->stuck_for_s, d, sizeof(d));
		ADD(GRID_COLOR(GRID_C_RED) | GRID_BOLD, "stuck D %s", d);
	}
	/* a group's floor is a sum: the member's own is on its row */
	if (r->busy_floor && r->group)
		ADD(GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, "busy floor");
	else if (r->busy_floor && r->floor_func[0] && !brief) {
		char fn[64];
		text_fit(r->floor_func, 24, fn, sizeof(fn));
		ADD(GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, "busy floor %.0f%% in %s", r->floor_pct,
		    fn);
	} else if (r->busy_floor) {
		ADD(GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, "busy floor %.0f%%", r->floor_pct);
	}
	if (r->stairs)
		ADD(GRID_COLOR(GRID_C_YELLOW) | GRID_BOLD, "stairs");
	if (r->zombie && !r->group && brief) {
		ADD(GRID_COLOR(GRID_C_MAGENTA) | GRID_BOLD, "zombie of %d", (int)r->ppid);
	} else if (r->zombie && !r->group) {
		char pn[32];
		text_fit(r->parent[0] ? r->parent : "?", 15, pn, sizeof(pn));
		ADD(GRID_COLOR(GRID_C_MAGENTA) | GRID_BOLD, "zombie (parent %d %s)", (int)r->ppid,
		    pn);
	}
	if (r->zombie_children && brief)
		ADD(GRID_COLOR(GRID_C_MAGENTA) | GRID_BOLD, "%d zombie%s", r->zombie_children,
		    r->zombie_children == 1 ? "" : "s");
	else if (r->zombie_children)
		ADD(GRID_COLOR(GRID_C_MAGENTA) | GRID_BOLD, "%d zombie %s", r->zombie_children,
		    r->zombie_children == 1 ? "child" : "children");
#undef ADD
}

/* The COMMAND cell: a group's cgroup (its last part when the whole does not
 * fit), a kernel thread's [name], the command line when there is room and
 * one, else the name. Escaped and cut to width. */
static void command_text(const struct view_procs_row *r, int width, char *out, size_t size)
{
	char buf[300];

	if (r->group) {
		const char *cg = r->cgroup[0] ? r->cgroup : "(no cgroup)";
		const char *last = strrchr(cg, '/');

		if (text_width(cg) > width && last && last[1])
			cg = last + 1;
		if (!strcmp(cg, "/"))
			cg = "/ (root)";
		text_fit(cg, width, out, size);
		return;
	}
	if (r->kernel || r->state == 'Z' || !r->cmd[0] || width < 16) {
		snprintf(buf, sizeof(buf), r->kernel || r->state == 'Z' ? "[%s]" : "%s", r->comm);
		text_fit(buf, width, out, size);
		return;
	}
	text_fit(r->cmd, width, out, size);
}

/* The CGROUP cell: the path's last part ("docker-3f2a9c1b2d4e.scope",
 * "nginx.service"), "/" for the root, "-" unknown; escaped and cut. */
static void cgroup_text(const char *cg, char *out, size_t size)
{
	const char *last = strrchr(cg, '/');

	if (!cg[0])
		cg = "-";
	else if (last && last[1])
		cg = last + 1;
	text_fit(cg, CG_W, out, size);
}

/* ---- layout and drawing ------------------------------------------------------ */

struct cols {
	int pid_x, pid_w, user_x, cpu_x, floor_x, spark_x, spark_w, rss_x, trend_x, trend_w;
	int thr_x, zd_x, zd_w, hot_x, hot_w, verdict_x, verdict_w, cg_x, cg_w, cmd_x, cmd_w;
	bool utf8;
};

static struct cols layout(int w, int pid_w, int verdict_w, bool any_trend, bool any_zd,
			  bool cgroups)
{
	struct cols c = {.pid_w = pid_w, .verdict_w = verdict_w};
	int fixed = pid_w + 1 + USER_W + 1 + CPU_W + 1 + FLOOR_W + 1 + RSS_W + 1 + THR_W + 1 +
		    (verdict_w ? verdict_w + 2 : 0);
	int budget = w - fixed - CMD_MIN, x;

	if (budget >= HOT_MIN + 2) {
		c.hot_w = budget - 2 < HOT_MAX ? budget - 2 : HOT_MAX;
		budget -= c.hot_w + 2;
	}
	if (budget >= SPARK_MIN + 2) {
		c.spark_w = budget - 2 < VIEW_PROCS_SPARK ? budget - 2 : VIEW_PROCS_SPARK;
		budget -= c.spark_w + 2;
	}
	if (any_trend && budget >= TREND_W + 1) {
		c.trend_w = TREND_W;
		budget -= TREND_W + 1;
	}
	if (any_zd && c.hot_w && budget >= ZD_W + 1) { /* the verdicts say it first */
		c.zd_w = ZD_W;
		budget -= ZD_W + 1;
	}
	/* Which container or service, when the command keeps its room. */
	if (cgroups && budget >= CG_W + 2 + CMD_ROOM - CMD_MIN) {
		c.cg_w = CG_W;
		budget -= CG_W + 2;
	}
	c.pid_x = 0;
	c.user_x = pid_w + 1;
	c.cpu_x = c.user_x + USER_W + 1;
	c.floor_x = c.cpu_x + CPU_W + 1;
	x = c.floor_x + FLOOR_W + 2;
	c.spark_x = x;
	x += c.spark_w ? c.spark_w + 2 : 0;
	c.rss_x = x;
	x += RSS_W + 1;
	c.trend_x = x;
	x += c.trend_w ? c.trend_w + 1 : 0;
	c.thr_x = x;
	x += THR_W + 1;
	c.zd_x = x;
	x += c.zd_w ? c.zd_w + 1 : 0;
	c.hot_x = x + 1;
	x += c.hot_w ? c.hot_w + 2 : 0;
	c.verdict_x = x + 1;
	x += verdict_w ? verdict_w + 2 : 0;
	c.cg_x = x + 1;
	x += c.cg_w ? c.cg_w + 2 : 0;
	c.cmd_x = x + 1;
	c.cmd_w = w - c.cmd_x;
	return c;
}

static void draw_column_header(struct grid *g, int y, const struct cols *c,
			       const struct view_procs_state *st)
{
	uint16_t hdr = GRID_COLOR(GRID_C_HEADER), on = hdr | GRID_BOLD | GRID_UNDERLINE;
	enum view_procs_sort s = st->sort;
	const char *pid = st->grouped ? "PROCS" : "PID";

	grid_fill(g, 0, y, g->w, L' ', hdr);
	grid_put(g, c->pid_x + c->pid_w - (int)strlen(pid), y, pid,
		 s == VIEW_PROCS_SORT_PID ? on : hdr, c->pid_w);
	grid_put(g, c->user_x, y, "USER", hdr, USER_W);
	grid_put(g, c->cpu_x + 2, y, "CPU%", s == VIEW_PROCS_SORT_CPU ? on : hdr, 4);
	grid_put(g, c->floor_x, y, "FLOOR", s == VIEW_PROCS_SORT_FLOOR ? on : hdr, FLOOR_W);
	if (c->spark_w)
		grid_put(g, c->spark_x, y, c->spark_w >= 15 ? "CPU last 30s" : "CPU 30s", hdr,
			 c->spark_w);
	grid_put(g, c->rss_x + 2, y, "RSS", s == VIEW_PROCS_SORT_RSS ? on : hdr, 3);
	if (c->trend_w)
		grid_put(g, c->trend_x, y, "TREND", hdr, c->trend_w);
	grid_put(g, c->thr_x + 1, y, "THR", hdr, 3);
	if (c->zd_w)
		grid_put(g, c->zd_x, y, "Z/D", hdr, c->zd_w);
	if (c->hot_w)
		grid_put(g, c->hot_x, y, "HOTTEST NOW", hdr, c->hot_w);
	if (c->verdict_w)
		grid_put(g, c->verdict_x, y, "VERDICT", hdr, c->verdict_w);
	if (c->cg_w)
		grid_put(g, c->cg_x, y, "CGROUP", hdr, c->cg_w);
	grid_put(g, c->cmd_x, y, st->grouped ? "CGROUP / COMMAND" : "COMMAND",
		 s == VIEW_PROCS_SORT_NAME ? on : hdr, c->cmd_w);
}

static void draw_row(struct grid *g, int y, const struct cols *c, const struct view_procs_row *r,
		     bool utf8, bool selected)
{
	char buf[512];
	uint16_t base = r->kernel ? GRID_DIM : 0, va;

	if (r->group)
		grid_printf(g, c->pid_x, y, GRID_BOLD, c->pid_w, "%*d", c->pid_w, r->nprocs);
	else
		grid_printf(g, c->pid_x, y, base, c->pid_w, "%s%*d", r->member ? " " : "",
			    c->pid_w - (r->member ? 1 : 0), (int)r->pid);
	if (!r->group) {
		text_fit(r->user, USER_W, buf, sizeof(buf));
		grid_put(g, c->user_x, y, buf, base, USER_W);
	}
	grid_printf(g, c->cpu_x, y, base, CPU_W, r->cpu_pct < 99.95 ? "%5.1f%%" : "%5.0f%%",
		    r->cpu_pct);
	grid_printf(g, c->floor_x, y, base, FLOOR_W, "%4.0f%%", r->floor_pct);
	if (c->spark_w)
		spark_draw(g, c->spark_x, y, r->spark + VIEW_PROCS_SPARK - c->spark_w, c->spark_w,
			   100.0, utf8);
	short_bytes((double)r->rss, buf, sizeof(buf));
	grid_printf(g, c->rss_x, y, base, RSS_W, "%*s", RSS_W, buf);
	if (c->trend_w) {
		trend_text(r, utf8, buf, sizeof(buf));
		grid_put(g, c->trend_x, y, buf,
			 r->stairs ? GRID_COLOR(GRID_C_YELLOW) | GRID_BOLD : base, c->trend_w);
	}
	grid_printf(g, c->thr_x, y, base, THR_W, "%*d", THR_W, r->nthreads);
	if (c->zd_w && (r->zombie_children || r->stuck_threads)) {
		int o = 0;
		buf[0] = '\0';
		if (r->zombie_children)
			o = snprintf(buf, sizeof(buf), "Z%d", r->zombie_children);
		if (r->stuck_threads)
			snprintf(buf + o, sizeof(buf) - (size_t)o, "%sD%d", o ? " " : "",
				 r->stuck_threads);
		grid_put(g, c->zd_x, y, buf, GRID_BOLD, c->zd_w);
	}
	if (c->hot_w) {
		text_fit(r->hottest, c->hot_w, buf, sizeof(buf));
		grid_put(g, c->hot_x, y, buf, base, c->hot_w);
	}
	if (c->verdict_w) {
		char v[256];
		verdict_text(r, g->w < 120, v, sizeof(v), &va);
		text_fit(v, c->verdict_w, buf, sizeof(buf));
		grid_put(g, c->verdict_x, y, buf, va, c->verdict_w);
	}
	if (c->cg_w) {
		cgroup_text(r->cgroup, buf, sizeof(buf));
		grid_put(g, c->cg_x, y, buf, base, c->cg_w);
	}
	command_text(r, c->cmd_w - (r->member ? 2 : 0), buf, sizeof(buf));
	grid_put(g, c->cmd_x + (r->member ? 2 : 0), y, buf, r->group ? GRID_BOLD : base, -1);
	if (selected) {
		struct cell *cl;
		for (int x = 0; x < g->w; x++)
			if ((cl = grid_at(g, x, y)))
				cl->attr = (uint16_t)((cl->attr & ~GRID_DIM) | GRID_REVERSE);
	}
}

static int digits(long v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

static void draw_footer(struct grid *g, const struct view_procs_state *st)
{
	char buf[256];

	if (st->editing) {
		view_footer_render(g, " filter: type a name, command or pid  Enter: keep  "
				      "Esc: cancel");
		return;
	}
	snprintf(buf, sizeof(buf),
		 " Enter: this process%s  /: %s  c: %s  s: sort (%s)  1 top  2 icicle  ? help  "
		 "q quit",
		 st->grouped ? " / open group" : "",
		 st->filter[0] ? "filter (Esc: clear)" : "filter",
		 st->grouped ? "ungroup" : "group by cgroup", view_procs_sort_name(st->sort));
	if (text_width(buf) > g->w)
		snprintf(buf, sizeof(buf),
			 " Enter: this process  /: filter  c: group  s: sort (%s)",
			 view_procs_sort_name(st->sort));
	view_footer_render(g, buf);
}

/* The filter at the right of the column header's line: "filter: cpub  3
 * of 212" (a cursor while it is typed), over the column names if it must. */
static void draw_filter(struct grid *g, int y, const struct view_procs_state *st)
{
	const char *cur = st->utf8 ? "\xe2\x96\x88" : "_"; /* the typing cursor */
	char pat[200], buf[300];
	int w, x;

	if (!st->editing && !st->filter[0])
		return;
	text_sanitize(filter_of(st), pat, sizeof(pat));
	snprintf(buf, sizeof(buf), " filter: %s%s  %d of %d ", pat, st->editing ? cur : "",
		 st->nmatched, st->nprocs);
	w = text_width(buf);
	x = g->w - w > 0 ? g->w - w : 0;
	grid_fill(g, x, y, g->w - x, L' ', GRID_COLOR(GRID_C_HEADER));
	grid_put(g, x, y, buf, GRID_COLOR(GRID_C_HEADER) | GRID_BOLD, g->w - x);
}

int view_procs_render(struct grid *g, const struct view_header *h,
		      const struct view_procs_state *st)
{
	struct cols c;
	char buf[256];
	uint16_t va;
	int n = st->nrows, y, vis, i, selected = st->selected, scroll = st->scroll;
	int verdict_w = 0, max_pid = 0;
	bool any_trend = false, any_zd = false;

	grid_clear(g);
	if (!st->batch && view_too_small(g))
		return 0;
	y = h ? view_header_render(g, 0, h) : 0;
	if (st->alerts[0] && st->batch) {
		y += view_alerts_wrap(g, y, g->w, st->alerts, GRID_BOLD);
	} else if (st->alerts[0]) {
		char a[1024];
		text_fit(st->alerts, g->w, a, sizeof(a));
		grid_fill(g, 0, y, g->w, L' ', GRID_COLOR(GRID_C_ALERT) | GRID_BOLD);
		grid_put(g, 0, y++, a, GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, g->w);
	}
	vis = table_rows(st, h, g->w, g->h);
	view_clamp_selection(&selected, &scroll, n, vis);
	for (i = scroll; i < n && i < scroll + vis; i++) {
		const struct view_procs_row *r = &st->rows[i];
		char t[32];

		verdict_text(r, g->w < 120, buf, sizeof(buf), &va);
		if (text_width(buf) > verdict_w)
			verdict_w = text_width(buf);
		if (r->pid > max_pid)
			max_pid = r->pid;
		trend_text(r, st->utf8, t, sizeof(t));
		any_trend |= t[0] != '\0';
		any_zd |= r->zombie_children || r->stuck_threads;
	}
	if (verdict_w > VERDICT_MAX)
		verdict_w = VERDICT_MAX;
	if (verdict_w > VERDICT_NARROW && g->w < 120)
		verdict_w = VERDICT_NARROW; /* HOTTEST keeps its 12 at 80 */
	c = layout(g->w, digits(max_pid) > 5 ? digits(max_pid) : 5, verdict_w, any_trend, any_zd,
		   !st->grouped);
	c.utf8 = st->utf8;
	draw_column_header(g, y, &c, st);
	draw_filter(g, y++, st);
	if (n == 0 && st->nprocs && (st->editing || st->filter[0]))
		view_put_centered(g, y, "no process matches the filter", GRID_DIM);
	else if (n == 0)
		view_put_centered(g, y, "waiting for the process list\xe2\x80\xa6", GRID_DIM);
	for (i = 0; i < vis && scroll + i < n; i++)
		draw_row(g, y + i, &c, &st->rows[scroll + i], st->utf8,
			 !st->batch && scroll + i == selected);
	if (!st->batch)
		draw_footer(g, st);
	return 0;
}

/* ---- keys ------------------------------------------------------------------- */

static struct view_action procs_move(void *ctx, int key)
{
	struct view_procs_state *st = ctx;

	view_move_selection(&st->selected, key, st->page > 1 ? st->page - 1 : 1);
	st->moved = true;
	st->follow_pid = 0;
	st->follow_group[0] = '\0';
	if (st->rows)
		clamp_selection(st, st->page);
	return keymap_used(true);
}

static struct view_action procs_sort(void *ctx, int key)
{
	struct view_procs_state *st = ctx;

	(void)key;
	st->sort = (enum view_procs_sort)((st->sort + 1) % VIEW_PROCS_SORT_COUNT);
	st->scroll = 0;
	return keymap_used(true);
}

static struct view_action procs_group(void *ctx, int key)
{
	struct view_procs_state *st = ctx;

	(void)key;
	st->grouped = !st->grouped;
	st->open[0] = '\0';
	st->scroll = 0;
	st->selected = 0;
	st->moved = false;
	return keymap_used(true);
}

static struct view_action procs_enter(void *ctx, int key)
{
	struct view_procs_state *st = ctx;
	const struct view_procs_row *r;

	(void)key;
	if (!st->rows || st->selected < 0 || st->selected >= st->nrows)
		return keymap_used(false);
	r = &st->rows[st->selected];
	if (r->group) {
		if (!strcmp(st->open, r->cgroup))
			st->open[0] = '\0';
		else
			snprintf(st->open, sizeof(st->open), "%s", r->cgroup);
		return keymap_used(true);
	}
	return (struct view_action){.kind = VIEW_ACTION_NARROW_PROCESS, .pid = r->pid};
}

/* '/': type a filter, starting from the one kept (to refine it). */
static struct view_action procs_filter(void *ctx, int key)
{
	struct view_procs_state *st = ctx;

	(void)key;
	st->editing = true;
	snprintf(st->edit, sizeof(st->edit), "%s", st->filter);
	return keymap_used(true);
}

/* A key while the filter is typed: Enter keeps it, Esc goes back to the
 * one before, Backspace drops a character (a whole UTF-8 sequence), the
 * rest is text. */
static void edit_key(struct view_procs_state *st, int key)
{
	size_t n = strlen(st->edit);

	switch (key) {
	case KEYS_ENTER:
		snprintf(st->filter, sizeof(st->filter), "%s", st->edit);
		st->editing = false;
		break;
	case KEYS_ESC:
		st->editing = false;
		break;
	case KEYS_BACKSPACE:
		while (n > 0 && ((unsigned char)st->edit[n - 1] & 0xc0) == 0x80)
			n--;
		if (n > 0)
			n--;
		st->edit[n] = '\0';
		break;
	default:
		if (key < 0x20 || key > 0xff || key == 0x7f || n + 1 >= sizeof(st->edit))
			return;
		st->edit[n] = (char)key;
		st->edit[n + 1] = '\0';
		break;
	}
	filter_changed(st);
}

static struct view_action procs_close(void *ctx, int key)
{
	struct view_procs_state *st = ctx;

	(void)key;
	if (st->filter[0]) { /* every process again, the selection kept */
		st->filter[0] = '\0';
		return keymap_used(true);
	}
	if (!st->open[0])
		return keymap_used(false);
	snprintf(st->follow_group, sizeof(st->follow_group), "%s", st->open);
	st->follow_pid = 0;
	st->open[0] = '\0';
	return keymap_used(true);
}

static const struct keymap_entry procs_keys[] = {
    {{KEYS_ENTER}, 0, procs_enter, NULL, "this process; close group", 0},
    {{KEYS_ESC}, 0, procs_close, NULL, NULL, 0},
    {{'/'}, 0, procs_filter, NULL, "filter: name, command or pid", 0},
    {{'c'}, 'C', procs_group, NULL, "group by cgroup; sort", 0},
    {{'s'}, 0, procs_sort, NULL, NULL, 0},
    KEYMAP_MOVE_ENTRY(procs_move),
};

const struct keymap view_procs_keymap = {"Process table (key 0)", procs_keys,
					 sizeof(procs_keys) / sizeof(procs_keys[0]), true};

struct view_action view_procs_key(struct view_procs_state *st, int key)
{
	if (st->editing) { /* typing: every key is text */
		edit_key(st, key);
		return keymap_used(true);
	}
	return keymap_act(&view_procs_keymap, st, key);
}
