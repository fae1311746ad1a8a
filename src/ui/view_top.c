/*
 * view_top — the py-spy style top-N table of functions.
 *
 * view_top_update asks window_top for the aggregated rows (unless the
 * state is frozen), copies each row's frame beside its counts, sorts them
 * and clamps the selection; view_top_render is a pure function of
 * (header, const state, grid size) that draws
 *
 *   header (view_header_render)
 *    %Own  %Total  OwnTime  TotalTime  Function (file:line)      Module
 *   rows...
 *   footer (interactive only)
 *
 * The four numeric columns have fixed widths (35 columns with their gaps),
 * the Module column takes 10..24 columns on the right and the function
 * column gets the rest, so 80 columns still show ~29 characters of name and
 * 200 columns show long C++ names whole.
 *
 * Wall mode swaps the numeric columns for " %Total  OnCPU  OffCPU  Wait"
 * (same 35 columns, so the function column keeps its width at 80 columns);
 * OnCPU and OffCPU are times, Wait the dominant wait kind of the row.
 *
 * Sorting: OWN and OWNTIME order by self samples, TOTAL and TOTALTIME by
 * total samples (the times are the counts times the period); ties go to the
 * other count, then to the name, then to the frame id, so rows do not swap
 * places between refreshes when their counts are equal.
 *
 * The state owns the kept rows (view_top_state_free). Keys move
 * st->selected blindly; update (and the key handler itself) clamp it and
 * report the selected frame, the number of rows and the page height back
 * in st. Render clamps a local copy, so it never writes to the state.
 */
#include "stacktop/ui/view_top.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/lib/text.h"
#include "stacktop/ui/view_chart.h"
#include "stacktop/ui/view_threads.h"
#include "stacktop/proc/waits.h"

#define NUM_W 35      /* " %Own  %Total  OwnTime  TotalTime  " */
#define NUM_W_WALL 42 /* " %Own  %Total   OnCPU   OffCPU  Wait      ": "CPU-wait" fits */

static bool sort_by_self(enum sort_key s)
{
	return s == SORT_OWN || s == SORT_OWNTIME;
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

struct sort_ctx {
	bool by_self;
	enum sort_key sort;
	bool wall;
};

/* The primary key of a row: the sorted column's count. */
static uint64_t sort_value(const struct sort_ctx *c, const struct window_top_row *r)
{
	if (!c->wall || c->sort == SORT_OWN || c->sort == SORT_TOTAL)
		return c->by_self ? r->self : r->total;
	if (c->sort == SORT_OWNTIME)
		return r->wait[SAMPLE_WAIT_NONE];
	return r->total - r->wait[SAMPLE_WAIT_NONE];
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct view_top_row *ra = pa, *rb = pb;
	const struct window_top_row *a = &ra->r, *b = &rb->r;
	uint64_t ka = sort_value(c, a), kb = sort_value(c, b);
	uint64_t oa = c->by_self ? a->total : a->self, ob = c->by_self ? b->total : b->self;
	const struct frame *fa = &ra->f, *fb = &rb->f;
	int r;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (oa != ob)
		return oa > ob ? -1 : 1;
	if ((r = cmp_str(fa->sym.func, fb->sym.func)) ||
	    (r = cmp_str(fa->sym.module, fb->sym.module)) ||
	    (r = cmp_str(fa->sym.file, fb->sym.file)))
		return r;
	if (fa->sym.line != fb->sym.line)
		return fa->sym.line < fb->sym.line ? -1 : 1;
	return a->frame < b->frame ? -1 : a->frame > b->frame;
}

/* Column geometry for a grid width. */
struct cols {
	int func_x, func_w, mod_x, mod_w;
	int proc_x, proc_w; /* by_process: the PROCESS column; proc_w 0: none */
};

static struct cols layout(int w, bool wall, bool by_process)
{
	struct cols c;

	c.mod_w = w < 80 ? 10 : w < 100 ? 14 : w < 140 ? 18 : 24;
	c.mod_x = w - c.mod_w;
	c.proc_x = wall ? NUM_W_WALL : NUM_W;
	c.proc_w = by_process ? (w < 100 ? 14 : 22) : 0;
	c.func_x = c.proc_x + (c.proc_w ? c.proc_w + 2 : 0);
	c.func_w = c.mod_x - 2 - c.func_x;
	/* On wide screens keep Module near the name it belongs to. */
	if (c.func_w > 100) {
		c.func_w = 100;
		c.mod_x = c.func_x + c.func_w + 2;
	}
	if (c.func_w < 8) { /* batch output narrower than the minimum: drop Module */
		c.mod_w = 0;
		c.mod_x = w;
		c.func_w = w - c.func_x;
	}
	return c;
}

/* The Function cell: "func (file:line)", "func (file)", "func",
 * "module+0x1a2b", with " [k]" on kernel frames and " (inline)" after an
 * inlined function's name; sanitized and cut to
 * width. With lines on, a long name is cut before its location, as long as
 * 8 columns of the name remain, so the file:line stays readable at 80
 * columns. Without, the bare file name is the first thing to go: the
 * function's own name says more than "clock_gett… (clock_gettime.c)". */
static void fmt_function(const struct frame *f, bool lines, bool full, int width, char *out,
			 size_t size)
{
	char shortn[512];
	char name[512], loc[320], file[256], mod[256], whole[900];
	int lw;

	loc[0] = 0;
	if (!f->has_sym) {
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)f->pc);
	} else if (!f->sym.func) {
		text_sanitize(text_basename(f->sym.module) ? text_basename(f->sym.module)
							   : "[unknown]",
			      mod, sizeof(mod));
		snprintf(name, sizeof(name), "%s+0x%llx", mod, (unsigned long long)f->sym.offset);
	} else {
		text_sanitize(view_func_name(f->sym.func, full, shortn, sizeof(shortn)), name,
			      sizeof(name));
		if (f->sym.inlined) /* its code is part of the next frame out */
			strncat(name, " (inline)", sizeof(name) - strlen(name) - 1);
		if (f->sym.file) {
			text_sanitize(text_basename(f->sym.file), file, sizeof(file));
			if (lines && f->sym.line > 0)
				snprintf(loc, sizeof(loc), " (%s:%d)", file, f->sym.line);
			else
				snprintf(loc, sizeof(loc), " (%s)", file);
		}
	}
	if (!lines && loc[0] && text_width(name) + text_width(loc) + (f->kernel ? 4 : 0) > width)
		loc[0] = 0;
	if (f->kernel)
		strncat(loc, " [k]", sizeof(loc) - strlen(loc) - 1);
	lw = text_width(loc);
	if (text_width(name) + lw > width && lw > 0 && lw <= width - 8) {
		text_fit(name, width - lw, whole, sizeof(whole));
		strncat(whole, loc, sizeof(whole) - strlen(whole) - 1);
	} else {
		snprintf(whole, sizeof(whole), "%s%s", name, loc);
	}
	text_fit(whole, width, out, size);
}

struct num_col {
	int x, w;
	const char *label;
};

static void draw_column_header(struct grid *g, int y, const struct cols *c, enum sort_key sort,
			       bool lines, bool wall, bool counts)
{
	/* Index wall * 2 + counts, then sort key. Wall: OnCPU/OffCPU replace
	 * the two times; a saved profile without a period: sample counts. */
	static const struct num_col sets[4][4] = {
	    {{1, 4, "%Own"}, {7, 6, "%Total"}, {15, 7, "OwnTime"}, {24, 9, "TotalTime"}},
	    {{1, 4, "%Own"}, {7, 6, "%Total"}, {15, 7, "OwnSamp"}, {24, 9, "TotalSamp"}},
	    {{1, 4, "%Own"}, {7, 6, "%Total"}, {16, 5, "OnCPU"}, {24, 6, "OffCPU"}},
	    {{1, 4, "%Own"}, {7, 6, "%Total"}, {16, 5, "OnSmp"}, {24, 6, "OffSmp"}},
	};
	const struct num_col *num = sets[wall * 2 + counts];
	uint16_t hdr = GRID_COLOR(GRID_C_HEADER);
	const char *label;
	int i;

	grid_fill(g, 0, y, g->w, L' ', hdr);
	for (i = 0; i < 4; i++) {
		bool on = i == (int)sort;
		uint16_t a = hdr | (on ? GRID_BOLD | GRID_UNDERLINE : 0);

		grid_put(g, num[i].x, y, num[i].label, a, num[i].w);
	}
	if (wall)
		grid_put(g, 32, y, "Wait", hdr, 8);
	label = lines ? "Function (file:line)" : "Function (file)";
	if ((int)strlen(label) > c->func_w)
		label = "Function";
	grid_put(g, c->func_x, y, label, hdr, c->func_w);
	if (c->proc_w)
		grid_put(g, c->proc_x, y, "Process", hdr, c->proc_w);
	if (c->mod_w)
		grid_put(g, c->mod_x, y, "Module", hdr, c->mod_w);
}

/* "held by writer-3 62%" for a lock-wait row whose holder is known (the
 * name from the metrics, sanitized), else "". */
static void holder_text(const struct view_top_state *st, const struct view_top_row *row, char *out,
			size_t size)
{
	const struct metrics *m = st->metrics;
	char name[64];
	int i;

	out[0] = '\0';
	if (!st->wall || !row->holder)
		return;
	for (i = 0; m && i < m->nthreads; i++)
		if (m->threads[i].tid == row->holder)
			break;
	if (m && i < m->nthreads)
		text_fit(m->threads[i].comm, 15, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%d", (int)row->holder);
	snprintf(out, size, "held by %s %.0f%%", name, row->holder_pct);
}

/* Seconds when the period is known, else the sample count (a folded
 * file knows counts, not times). */
static void fmt_amount(uint64_t n, double period, char *out, size_t size)
{
	if (period > 0)
		text_seconds((double)n * period, out, size);
	else
		text_count(n, out, size);
}

static void draw_row(struct grid *g, int y, const struct cols *c, const struct view_top_row *row,
		     uint64_t total, double period, const struct view_top_state *st, bool selected)
{
	const struct window_top_row *r = &row->r;
	const struct frame *f = &row->f;
	char own[16], tot[16], buf[1024], mod[256], hold[96];
	int hw, fw, hx, room;
	double po = total ? 100.0 * (double)r->self / (double)total : 0;
	double pt = total ? 100.0 * (double)r->total / (double)total : 0;

	if (st->wall) {
		uint64_t on = r->wait[SAMPLE_WAIT_NONE], off = r->total > on ? r->total - on : 0;
		int k, best = 0;

		for (k = 1; k < SAMPLE_WAIT_COUNT; k++)
			if (r->wait[k] > (best ? r->wait[best] : 0))
				best = k;
		fmt_amount(on, period, own, sizeof(own));
		fmt_amount(off, period, tot, sizeof(tot));
		grid_printf(g, 0, y, 0, NUM_W_WALL, "%5.1f  %6.1f  %6s  %7s  %-8s", po, pt, own,
			    tot, best ? waits_name((enum sample_wait)best) : "-");
	} else {
		fmt_amount(r->self, period, own, sizeof(own));
		fmt_amount(r->total, period, tot, sizeof(tot));
		grid_printf(g, 0, y, 0, NUM_W, "%5.1f  %6.1f  %7s  %9s", po, pt, own, tot);
	}
	if (c->proc_w) {
		text_fit(row->proc, c->proc_w, buf, sizeof(buf));
		grid_put(g, c->proc_x, y, buf, 0, c->proc_w);
	}
	/* A holder may take the Module column's room: it says more. */
	holder_text(st, row, hold, sizeof(hold));
	room = c->func_w + (c->mod_w ? 2 + c->mod_w : 0);
	hw = hold[0] ? text_width(hold) + 2 : 0;
	if (hw && room - hw < 12)
		hw = 0; /* the function's name first */
	fw = hw && room - hw < c->func_w ? room - hw : c->func_w;
	fmt_function(f, st->lines, st->full_names, fw, buf, sizeof(buf));
	grid_put(g, c->func_x, y, buf, f->kernel ? GRID_COLOR(GRID_C_MAGENTA) : 0, fw);
	hx = c->func_x + text_width(buf) + 2;
	if (hw)
		grid_put(g, hx, y, hold, GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, hw - 2);
	if (c->mod_w && (!hw || hx + hw <= c->mod_x)) {
		const char *m = f->has_sym ? text_basename(f->sym.module) : NULL;

		/* A named frame without a module (a folded file) has none to
		 * show; "?" is for a pc nobody could name. */
		text_fit(m ? m : f->has_sym ? "" : "?", c->mod_w, mod, sizeof(mod));
		grid_put(g, c->mod_x, y, mod, GRID_DIM, c->mod_w);
	}
	if (selected) {
		struct cell *cl;
		int x;

		/* Reverse the whole row, keeping the cells' colours. */
		for (x = 0; x < g->w; x++)
			if ((cl = grid_at(g, x, y)))
				cl->attr = (uint16_t)((cl->attr & ~GRID_DIM) | GRID_REVERSE);
	}
}

/* Batch output is read as text, not on a screen of fixed width: size the
 * function column to its longest entry, so Module follows right after it
 * instead of sitting 100 columns away. */
static void tighten(struct cols *c, const struct view_top_row *rows, size_t n, int vis, bool lines,
		    bool full)
{
	char buf[1024];
	int i, longest = (int)strlen("Function (file:line)"), fw;

	for (i = 0; i < vis && i < (int)n; i++) {
		fmt_function(&rows[i].f, lines, full, c->func_w, buf, sizeof(buf));
		fw = text_width(buf);
		if (fw > longest)
			longest = fw;
	}
	if (longest < c->func_w) {
		c->func_w = longest;
		c->mod_x = c->func_x + c->func_w + 2;
	}
}

void view_top_state_free(struct view_top_state *st)
{
	free(st->kept);
	st->kept = NULL;
	st->nkept = 0;
	st->kept_total = 0;
	st->have_rows = false;
	st->wall_split[0] = '\0';
}

/* Do two frames name the same row (the key window_top aggregates by)? */
static bool same_row(const struct frame *a, const struct frame *b, bool lines)
{
	if (a->kernel != b->kernel || a->has_sym != b->has_sym)
		return false;
	if (!a->has_sym)
		return a->pc == b->pc && a->pid == b->pid;
	if (cmp_str(a->sym.module, b->sym.module) || cmp_str(a->sym.func, b->sym.func))
		return false;
	if (!a->sym.func && a->sym.offset != b->sym.offset)
		return false;
	return !lines || (!cmp_str(a->sym.file, b->sym.file) && a->sym.line == b->sym.line);
}

#define HOLDERS_MAX 8 /* owners told apart per row */
/* Waiting threads asked about per update: each is one walk of the window's
 * counts, so a thousand waiters must not make each refresh a thousand walks. */
#define HOLDERS_WAITERS_MAX 64

struct holder_acc {
	int row; /* index in kept */
	pid_t owner[HOLDERS_MAX];
	double wt[HOLDERS_MAX], sum;
	int n;
};

static void acc_add(struct holder_acc *a, pid_t owner, double wt)
{
	int i;

	a->sum += wt;
	for (i = 0; i < a->n; i++)
		if (a->owner[i] == owner) {
			a->wt[i] += wt;
			return;
		}
	if (a->n < HOLDERS_MAX) {
		a->owner[a->n] = owner;
		a->wt[a->n++] = wt;
	}
}

/* Wall mode: for each row that mostly waits on locks, the thread that held
 * what its waiters waited on: each waiter's lock samples in the row are
 * split among the owners it was seen waiting on (locks_held_by), summed
 * over the waiters; the biggest known owner and its share are kept. One
 * window query per waiting thread. */
static int find_holders(struct view_top_state *st, struct window *w,
			const struct window_top_query *base)
{
	const struct locks *lk = st->locks;
	struct holder_acc *acc;
	struct window_top_query q = *base;
	struct window_top_row *rows = NULL;
	pid_t owners[HOLDERS_MAX];
	double shares[HOLDERS_MAX];
	size_t n, i, k, nacc = 0;
	uint64_t total;
	int err = 0, h, no, asked;

	if (!lk || !lk->nhold || !st->nkept)
		return 0;
	if (!(acc = calloc(st->nkept, sizeof(*acc))))
		return -ENOMEM;
	for (i = 0; i < st->nkept; i++) {
		const struct window_top_row *r = &st->kept[i].r;
		int best = 0;
		for (int kk = 1; kk < SAMPLE_WAIT_COUNT; kk++)
			if (r->wait[kk] > (best ? r->wait[best] : 0))
				best = kk;
		if (best == SAMPLE_WAIT_LOCK)
			acc[nacc++].row = (int)i;
	}
	for (h = 0, asked = 0; nacc && h < lk->nhold && asked < HOLDERS_WAITERS_MAX; h++) {
		pid_t waiter = lk->hold[h].waiter;
		int seen = 0;
		for (int e = 0; e < h; e++)
			seen |= lk->hold[e].waiter == waiter;
		if (seen || (st->tid && st->tid != waiter))
			continue;
		asked++;
		if (!(no = locks_held_by(lk, waiter, owners, shares, HOLDERS_MAX)))
			continue;
		q.tid = waiter;
		if ((err = window_top(w, &q, &rows, &n, &total)))
			break;
		for (i = 0; i < n; i++) {
			const struct frame *f;
			if (!rows[i].wait[SAMPLE_WAIT_LOCK] ||
			    !(f = frames_get(window_frames(w), rows[i].frame)))
				continue;
			for (k = 0; k < nacc; k++) {
				if (!same_row(f, &st->kept[acc[k].row].f, st->lines))
					continue;
				for (int o = 0; o < no; o++)
					acc_add(&acc[k], owners[o],
						(double)rows[i].wait[SAMPLE_WAIT_LOCK] * shares[o]);
				break;
			}
		}
		free(rows);
		rows = NULL;
	}
	for (k = 0; k < nacc; k++) {
		struct view_top_row *r = &st->kept[acc[k].row];
		int best = -1;
		for (int o = 0; o < acc[k].n; o++)
			if (acc[k].owner[o] && (best < 0 || acc[k].wt[o] > acc[k].wt[best]))
				best = o;
		if (best >= 0 && acc[k].sum > 0) {
			r->holder = acc[k].owner[best];
			r->holder_pct = 100.0 * acc[k].wt[best] / acc[k].sum;
		}
	}
	free(acc);
	return err;
}

/* The PROCESS cell of a by-process row: the app's label, else the pid. */
static void process_text(const struct view_top_state *st, int pid, char *out, size_t size)
{
	char raw[128] = "";

	if (st->process_label)
		st->process_label(st->process_ctx, pid, raw, sizeof(raw));
	if (!raw[0])
		snprintf(raw, sizeof(raw), "pid %d", pid);
	text_sanitize(raw, out, size);
}

/* Take the rows from the window into st->kept, each with a copy of its
 * frame, and the wall-time split. */
static int take_rows(struct view_top_state *st, struct window *w)
{
	struct window_top_query q = {
	    .key = st->lines ? WINDOW_KEY_LINE : WINDOW_KEY_FUNCTION,
	    .tid = st->tid,
	    .hide_kernel = st->hide_kernel,
	    .hide_idle = st->wall && st->hide_idle,
	    .pid = st->pid,
	    .by_process = st->by_process && !st->pid,
	};
	struct window_top_row *rows = NULL;
	struct view_top_row *kept;
	uint64_t total = 0;
	size_t n = 0, i;
	int err;

	/* By line, the aggregation itself needs the line of every frame on a
	 * live stack (looked up once each, then cached by the frames table). */
	if (st->lines && (err = window_resolve_lines(w, st->tid)))
		return err;
	if ((err = window_top(w, &q, &rows, &n, &total)))
		return err;
	kept = malloc((n ? n : 1) * sizeof(*kept));
	if (!kept) {
		free(rows);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		kept[i].r = rows[i];
		const struct frame *f = frames_get(window_frames(w), rows[i].frame);
		kept[i].f = f ? *f : (struct frame){.pc = rows[i].frame};
		kept[i].holder = 0;
		kept[i].holder_pct = 0;
		kept[i].proc[0] = '\0';
		if (q.by_process)
			process_text(st, rows[i].pid, kept[i].proc, sizeof(kept[i].proc));
	}
	free(rows);
	free(st->kept);
	st->kept = kept;
	st->nkept = n;
	st->kept_total = total;
	st->have_rows = true;
	st->wall_split[0] = '\0';
	if (st->wall) {
		uint64_t counts[SAMPLE_WAIT_COUNT];

		window_wait_counts(w, st->tid, counts);
		view_wait_split(counts, !st->utf8, st->wall_split, sizeof(st->wall_split));
		return find_holders(st, w, &q);
	}
	return 0;
}

/* The alerts line: the metrics' alerts, then a deadlock among the threads
 * (a deadlocked process burns nothing, so this line is what says why). */
static void alerts_text(const struct view_top_state *st, int width, char *buf, size_t size)
{
	char dl[512];
	size_t l;

	buf[0] = '\0';
	if (st->metrics)
		view_chart_alerts_fit(st->metrics, st->batch ? 0 : width, buf, size);
	l = strlen(buf);
	if (st->alerts && st->alerts[0] && l + 4 < size)
		snprintf(buf + l, size - l, "%s%s", l ? "   " : "", st->alerts);
	view_threads_deadlock_text(st->metrics, st->locks, st->utf8, dl, sizeof(dl));
	if (!dl[0])
		return;
	l = strlen(buf);
	snprintf(buf + l, size - l, "%s%s (%s)", l ? "   " : "", dl,
		 st->batch ? "threads: --view threads" : "threads: key 3");
}

/* Memory to show: a saved profile carries its CPU, never its memory. */
static bool mem_known(const struct metrics *m)
{
	return m->rss.len || !m->exited;
}

/* Batch: the series as text lines, so logs carry them, in the words the
 * TUI's charts use. */
static int draw_series_lines(struct grid *g, int y, const struct view_top_state *st)
{
	const struct metrics *m = st->metrics;
	char buf[1024], mem[512], limit[256];
	int rows = 0;

	alerts_text(st, 0, buf, sizeof(buf));
	rows += view_alerts_wrap(g, y, g->w, buf, GRID_BOLD);
	view_chart_cpu_text(m, m->multi, buf, sizeof(buf));
	grid_printf(g, 0, y + rows++, 0, -1, "%s  (%% of one core)", buf);
	if (!mem_known(m))
		return rows;
	view_chart_mem_text(m, m->multi, mem, sizeof(mem));
	view_chart_mem_limit_text(m, limit, sizeof(limit));
	grid_printf(g, 0, y + rows++, 0, -1, "%s%s%s", mem, limit[0] ? "  " : "", limit);
	return rows;
}

static int series_lines_height(const struct view_top_state *st, int cols)
{
	char buf[1024];

	alerts_text(st, 0, buf, sizeof(buf));
	return view_alerts_wrap(NULL, 0, cols, buf, 0) + 1 + mem_known(st->metrics);
}

/* TUI: the rows of the alerts line, the CPU chart and the memory chart or
 * verdict, sized to leave the table at least a few rows (gh: grid height,
 * y: first row). */
/* Memory climbing (a verdict of stairs, or rising too briefly to call). */
static bool mem_moving(const struct metrics *m)
{
	return m && (m->mem_rising || m->mem_trend.kind == SERIES_STAIRS || m->alert_stairs);
}

static void charts_plan(const struct view_top_state *st, int gh, int y, int *alerts, int *cpu_h,
			int *mem_h)
{
	char buf[1024];
	int room;

	alerts_text(st, 0, buf, sizeof(buf));
	*alerts = buf[0] && y < gh ? 1 : 0;
	*cpu_h = *mem_h = 0;
	if (!st->charts)
		return;
	room = gh - 1 - (y + *alerts) - 6; /* footer, and header + 5 rows of table */
	*cpu_h = gh >= 45 ? 8 : gh >= 30 ? 6 : 4;
	*mem_h = gh >= 45 ? 6 : gh >= 30 ? 2 : 1;
	if (*cpu_h + *mem_h > room) {
		*cpu_h = room >= 5 ? 4 : room >= 4 ? 3 : 0;
		*mem_h = room - *cpu_h >= 1 ? 1 : 0;
	}
	/* A short screen (80x24) and memory on the move: memory is the story,
	 * so it gets the chart and the CPU its line and a sparkline. */
	if (gh < 30 && mem_moving(st->metrics) && *cpu_h + *mem_h >= 5) {
		*cpu_h = 2;
		*mem_h = 4;
	}
	if (!mem_known(st->metrics)) {
		*cpu_h += *mem_h;
		*mem_h = 0;
	}
}

/* TUI: alerts, then the charts as charts_plan says. When the table is
 * narrowed to one thread the charts say they are still process-wide.
 * Returns the rows used. */
static int draw_charts(struct grid *g, int y, const struct view_top_state *st)
{
	const struct metrics *m = st->metrics;
	int alerts, cpu_h, mem_h, used;

	charts_plan(st, g->h, y, &alerts, &cpu_h, &mem_h);
	used = 0;
	if (alerts) {
		char buf[1024];

		alerts_text(st, g->w, buf, sizeof(buf));
		grid_fill(g, 0, y, g->w, L' ', GRID_COLOR(GRID_C_ALERT) | GRID_BOLD);
		grid_put(g, 0, y, buf, GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, g->w);
		used = 1;
	}
	if (cpu_h) {
		view_chart_cpu_scoped(g, 0, y + used, g->w, cpu_h, m, st->utf8,
				      st->tid != 0 || m->multi);
		used += cpu_h;
	}
	if (mem_h) {
		view_chart_mem_scoped(g, 0, y + used, g->w, mem_h, m, st->utf8,
				      st->tid != 0 || m->multi);
		used += mem_h;
	}
	return used;
}

/* First row of the table's column header for a cols x rows grid, and the
 * table rows that fit under it. */
static void table_geometry(const struct view_top_state *st, const struct view_header *h, int cols,
			   int rows, int *table_y, int *vis)
{
	int y = view_header_height(h), bottom;

	if (st->wall && h && st->wall_split[0])
		y++;
	if (st->metrics) {
		if (st->batch) {
			y += series_lines_height(st, cols);
		} else {
			int alerts, cpu_h, mem_h;

			charts_plan(st, rows, y, &alerts, &cpu_h, &mem_h);
			y += alerts + cpu_h + mem_h;
		}
	} else if (st->alerts && st->alerts[0]) {
		y++; /* the box's alerts line */
	}
	bottom = st->batch ? rows : rows - 1; /* first row not for the table */
	*table_y = y;
	*vis = bottom - (y + 1);
	if (st->batch && st->limit > 0 && *vis > st->limit)
		*vis = st->limit;
	if (*vis < 0)
		*vis = 0;
}

/* Clamp the selection to the kept rows and a page of st->page rows, and
 * name the selected frame. */
static void sync_selection(struct view_top_state *st)
{
	st->nrows = (int)st->nkept;
	if (st->batch)
		st->scroll = 0;
	view_clamp_selection(&st->selected, &st->scroll, st->nrows, st->page);
	st->selected_frame = st->nkept ? st->kept[st->selected].r.frame : UINT32_MAX;
}

/* "(file)" for the rows on screen: file:line is looked up only for the
 * frames a view shows. A kept row whose id the frames table has since given
 * to another frame (a frozen table) keeps what it has. */
static void resolve_shown_lines(struct view_top_state *st, struct window *w)
{
	struct frames *fr = window_frames_mut(w);
	int vis = st->batch ? (st->limit > 0 ? st->limit : (int)st->nkept) : st->page;
	for (int i = st->scroll; i < st->scroll + vis && i < (int)st->nkept; i++) {
		struct frame *kf = &st->kept[i].f;
		const struct frame *f = frames_get(fr, st->kept[i].r.frame);
		if (kf->has_line || !f || f->pid != kf->pid || f->pc != kf->pc ||
		    f->kernel != kf->kernel)
			continue;
		*kf = *frames_line(fr, st->kept[i].r.frame);
	}
}

int view_top_update(struct view_top_state *st, struct window *w, const struct view_header *h,
		    int cols, int rows)
{
	struct sort_ctx sc = {
	    .by_self = sort_by_self(st->sort), .sort = st->sort, .wall = st->wall};
	int table_y, err;

	if (!st->frozen || !st->have_rows) {
		if ((err = take_rows(st, w)))
			return err;
	}
	qsort_r(st->kept, st->nkept, sizeof(*st->kept), row_cmp, &sc);
	st->page = 0;
	if (st->batch || (cols >= VIEW_MIN_W && rows >= VIEW_MIN_H))
		table_geometry(st, h, cols, rows, &table_y, &st->page);
	sync_selection(st);
	resolve_shown_lines(st, w);
	return 0;
}

/* ---- keys ---- */

static struct view_action top_move(void *ctx, int key)
{
	struct view_top_state *st = ctx;

	view_move_selection(&st->selected, key, st->page > 1 ? st->page : 1);
	if (st->have_rows)
		sync_selection(st);
	return keymap_used(true);
}

static struct view_action top_sort(void *ctx, int key)
{
	struct view_top_state *st = ctx;
	int step = key == 's' || key == '>' ? 1 : SORT_COUNT - 1;

	st->sort = (enum sort_key)((st->sort + step) % SORT_COUNT);
	return keymap_used(true);
}

static struct view_action top_enter(void *ctx, int key)
{
	struct view_top_state *st = ctx;
	struct view_action act = {.kind = VIEW_ACTION_OPEN_ICICLE, .frame = st->selected_frame};

	(void)key;
	if (st->selected_frame == UINT32_MAX)
		return keymap_used(false);
	act.frame_copy = &st->kept[st->selected].f;
	return act;
}

static struct view_action top_all_threads(void *ctx, int key)
{
	(void)key;
	return view_all_threads(((struct view_top_state *)ctx)->tid);
}

static struct view_action top_annotate(void *ctx, int key)
{
	struct view_top_state *st = ctx;
	struct view_action act = {.kind = VIEW_ACTION_ANNOTATE, .frame = UINT32_MAX};

	(void)key;
	if (st->nkept && st->selected >= 0 && (size_t)st->selected < st->nkept)
		act.frame_copy = &st->kept[st->selected].f;
	return act;
}

static const struct keymap_entry top_keys[] = {
    {{'s', '>'}, 0, top_sort, NULL, "sort by next / prev column", 0},
    {{'S', '<'}, 0, top_sort, NULL, NULL, 0},
    {{KEYS_UP, KEYS_DOWN, KEYS_PGUP, KEYS_PGDN, KEYS_HOME, KEYS_END},
     0,
     top_move,
     "\xe2\x86\x91\xe2\x86\x93 PgUp/Dn",
     "move selection (Home, End)",
     0},
    {{KEYS_ENTER}, 0, top_enter, NULL, "icicle on it; all threads", 0},
    {{KEYS_ESC}, 0, top_all_threads, NULL, NULL, 0},
    {{'a'}, 0, top_annotate, NULL, "annotate it (icicle too)", 0},
};

const struct keymap view_top_keymap = {"Top view", top_keys, sizeof(top_keys) / sizeof(top_keys[0]),
				       true};

struct view_action view_top_key(struct view_top_state *st, int key)
{
	return keymap_act(&view_top_keymap, st, key);
}

int view_top_render(struct grid *g, const struct view_header *h, const struct view_top_state *st)
{
	const struct view_top_row *rows = st->kept;
	struct cols c;
	uint64_t total = st->kept_total;
	double period = st->period_s;
	size_t n = st->have_rows ? st->nkept : 0;
	int y, vis, i, selected = st->selected, scroll = st->scroll;

	grid_clear(g);
	if (!st->batch && view_too_small(g))
		return 0;
	if (!(period > 0) && h && h->rate_hz > 0)
		period = 1.0 / h->rate_hz;

	y = h ? view_header_render(g, 0, h) : 0;
	if (st->wall && h && st->wall_split[0]) {
		char split[256];
		text_sanitize(st->wall_split, split, sizeof(split));
		grid_printf(g, 0, y++, 0, g->w, "wall time: %s%s", split,
			    st->hide_idle ? "  (idle threads hidden: i shows them)" : "");
	}
	if (st->metrics) {
		y += st->batch ? draw_series_lines(g, y, st) : draw_charts(g, y, st);
	} else if (st->alerts && st->alerts[0]) {
		char buf[1024];

		alerts_text(st, g->w, buf, sizeof(buf));
		grid_fill(g, 0, y, g->w, L' ', GRID_COLOR(GRID_C_ALERT) | GRID_BOLD);
		grid_put(g, 0, y++, buf, GRID_COLOR(GRID_C_ALERT) | GRID_BOLD, g->w);
	}
	c = layout(g->w, st->wall, st->by_process && !st->pid);
	table_geometry(st, h, g->w, g->h, &i, &vis);
	if (st->batch)
		scroll = 0;
	view_clamp_selection(&selected, &scroll, (int)n, vis);

	if (st->batch && c.mod_w)
		tighten(&c, rows, n, vis, st->lines, st->full_names);
	draw_column_header(g, y++, &c, st->sort, st->lines, st->wall, !(period > 0));
	if ((n == 0 || total == 0) && st->locks && st->locks->ncycles > 0) {
		/* Deadlocked: nothing will run, so say why at once rather
		 * than wait for samples that cannot come. */
		char msg[160];
		text_fit("no samples: its threads wait on each other (the DEADLOCK line above)",
			 g->w, msg, sizeof(msg));
		view_put_centered(g, y, msg, GRID_DIM);
	} else if ((n == 0 || total == 0) && !st->wall && st->metrics &&
		   st->metrics->rss.len >= 3) {
		/* Seconds in and still nothing: on-CPU sampling sees only
		 * threads that run; say so, and what sees the others (a
		 * master whose workers burn: its children). */
		char msg[160];
		/* A traced target: wall mode needs ptrace too and would be
		 * refused; the tracer is what to look at. */
		text_fit(
		    h && h->warning == VIEW_WARNING_TRACED
			? "no samples: its tracer holds it stopped (the line above names it)"
		    : h && h->children_busy
			? "no samples: nothing ran on a CPU; its children do: try --subprocesses"
			: "no samples: nothing ran on a CPU; wall mode (-w) sees waiting threads",
		    g->w, msg, sizeof(msg));
		view_put_centered(g, y, msg, GRID_DIM);
	} else if (n == 0 || total == 0) {
		view_put_centered(g, y, "waiting for samples\xe2\x80\xa6", GRID_DIM);
	}
	for (i = 0; i < vis && scroll + i < (int)n; i++) {
		int r = scroll + i;

		draw_row(g, y + i, &c, &rows[r], total, period, st, !st->batch && r == selected);
	}
	if (!st->batch)
		view_footer_render(g, h && h->source ? view_footer_report : NULL);
	return 0;
}
