/*
 * view_chart — the CPU and memory charts, the alerts line and sparklines,
 * drawn into a rectangle of a grid. Pure functions of (metrics, rectangle,
 * utf8): no state, no allocation that outlives a call, nothing drawn
 * outside the rectangle (every write goes through rect_put/rect_cell).
 *
 * A chart is, left to right: a gutter with the value axis (the scale's top
 * and, for memory, its bottom, each with its unit; the title sits on the
 * axis row), the plot, and a column of labels ("now 187%", "peak 240%",
 * "base 120%", "floor 95%"), each marker's label on the marker's row when
 * that row is free. The bottom row is the time axis: "+-60s-----now".
 *
 *   CPU: 1 column per second; when the window is wider than the plot,
 *   columns are groups of seconds and show the group's MAXIMUM, so a
 *   one-second burst never disappears (the floor marker shows the low end).
 *   The scale starts at 0. Markers: baseline ("- - -", '╌' in UTF-8) and
 *   floor ('_'), drawn wherever the bar does not fill the cell.
 *
 *   Memory (h >= 4): the verdict line(s) on top, then an RSS chart scaled to
 *   the data's own range (so stairs of a few MiB on a large heap still show),
 *   or from 0 with the limit line ('=' / '═') when the limit is within 1.5x
 *   of the peak. With h 1..3 only the verdict lines.
 *
 * Fills: ASCII " . : #" (a '.' or ':' tops a column of '#'), UTF-8 eighth
 * blocks ▁▂▃▄▅▆▇█ for the partial top cell. Any value above the bottom of
 * the scale shows at least a '.' / '▁', so short bursts are never blank.
 */
#include "stacktop/view_chart.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/text.h"

#define MIB (1024.0 * 1024.0)

#define A_BAR_CPU GRID_COLOR(GRID_C_GREEN)
#define A_BAR_MEM GRID_COLOR(GRID_C_CYAN)
#define A_FLOOR (GRID_COLOR(GRID_C_YELLOW) | GRID_BOLD)
#define A_BASE GRID_COLOR(GRID_C_CYAN)
#define A_LIMIT (GRID_COLOR(GRID_C_RED) | GRID_BOLD)
#define A_AXIS GRID_DIM
#define A_ALERT (GRID_COLOR(GRID_C_ALERT) | GRID_BOLD)

struct rect {
	int x, y, w, h;
};

/* Text at (x, y), cut at the rectangle's right edge. */
static void rect_put(struct grid *g, const struct rect *r, int x, int y, uint16_t attr,
		     const char *s)
{
	if (y < r->y || y >= r->y + r->h || x < r->x || x >= r->x + r->w)
		return;
	grid_put(g, x, y, s, attr, r->x + r->w - x);
}

static void rect_cell(struct grid *g, const struct rect *r, int x, int y, wchar_t ch, uint16_t attr)
{
	if (y < r->y || y >= r->y + r->h || x < r->x || x >= r->x + r->w)
		return;
	grid_fill(g, x, y, 1, ch, attr);
}

/* The smallest of 1, 2, 2.5, 5 x 10^k that is >= x. */
static double nice_step(double x)
{
	static const double m[] = {1, 2, 2.5, 5, 10};
	double p;

	if (x <= 0)
		return 1;
	p = pow(10, floor(log10(x)));
	for (int i = 0; i < 5; i++)
		if (m[i] * p >= x * (1 - 1e-9))
			return m[i] * p;
	return 10 * p;
}

/* A scale [*lo, *hi] around [lo, hi] on multiples of a round step, about
 * four steps high. */
static void nice_range(double lo, double hi, double min_span, double *out_lo, double *out_hi)
{
	double span = hi - lo, step;

	if (span < min_span)
		span = min_span;
	step = nice_step(span / 4);
	*out_lo = floor(lo / step) * step;
	*out_hi = ceil(hi / step) * step;
	if (*out_hi - *out_lo < step)
		*out_hi = *out_lo + step;
}

/* ---- the chart engine ---- */

enum mark_kind { MARK_FLOOR, MARK_BASE, MARK_LIMIT };

struct chart_mark {
	enum mark_kind kind;
	double v;
};

struct chart_label {
	char text[40];
	int mark; /* index into marks whose row it prefers, -1: any row */
	uint16_t attr;
};

struct chart {
	struct rect r; /* plot rows + the axis row */
	const struct series *s;
	double now_t;
	unsigned window_s;
	double lo, hi;	   /* the scale */
	const char *title; /* on the axis row, in the gutter */
	char top[24], bottom[24];
	struct chart_mark marks[3];
	int nmarks;
	struct chart_label labels[5]; /* right column, most important first */
	int nlabels;
	int gutter_w, right_w;
	bool utf8;
	uint16_t bar_attr;
};

/* Row (counted from the bottom) where a marker at v is drawn: '_' sits at
 * the bottom of a cell, so it goes to the nearest cell boundary; dashes sit
 * in the middle, so they go to the cell containing v. -1: off the scale. */
static int mark_row(const struct chart *c, const struct chart_mark *mk, int ph)
{
	double pos;
	int rb;

	if (mk->v < c->lo || mk->v > c->hi || c->hi <= c->lo)
		return -1;
	pos = (mk->v - c->lo) / (c->hi - c->lo) * ph;
	rb = mk->kind == MARK_FLOOR ? (int)lround(pos) : (int)floor(pos);
	if (rb >= ph)
		rb = ph - 1;
	return rb < 0 ? 0 : rb;
}

static wchar_t partial_cell(double frac, bool utf8)
{
	if (utf8) {
		long i = lround(frac * 8);
		return i <= 0 ? 0 : (wchar_t)(0x2580 + (i > 8 ? 8 : i)); /* ▁ .. █ */
	}
	if (frac < 1.0 / 6)
		return 0;
	if (frac < 0.5)
		return L'.';
	return frac < 5.0 / 6 ? L':' : L'#';
}

/* Column values: the maximum of each group of seconds, -1 where no point. */
static int chart_columns(const struct chart *c, int ncols, int group, double *cv)
{
	size_t cap = c->s->len ? c->s->len : 1;
	double *tv = malloc(cap * sizeof(double)), *vv = malloc(cap * sizeof(double));
	size_t n;

	if (!tv || !vv) {
		free(tv);
		free(vv);
		return -ENOMEM;
	}
	for (int i = 0; i < ncols; i++)
		cv[i] = -1;
	n = series_get(c->s, tv, vv, cap);
	for (size_t i = 0; i < n; i++) {
		long k = lround(c->now_t - tv[i]); /* seconds ago */
		if (k < 0 || k >= (long)ncols * group)
			continue;
		int col = ncols - 1 - (int)(k / group);
		if (vv[i] > cv[col])
			cv[col] = vv[i];
	}
	free(tv);
	free(vv);
	return 0;
}

/* Bars; returns in full[] how many cells of each column are full. */
static void chart_bars(struct grid *g, const struct chart *c, int px, int ph, int ncols,
		       const double *cv, int *full)
{
	wchar_t fullch = c->utf8 ? 0x2588 : L'#', tiny = c->utf8 ? 0x2581 : L'.';

	for (int col = 0; col < ncols; col++) {
		full[col] = 0;
		if (cv[col] < 0)
			continue;
		double fh = (cv[col] - c->lo) / (c->hi - c->lo) * ph;
		if (fh < 0)
			fh = 0;
		int nf = fh >= ph ? ph : (int)fh;
		for (int rb = 0; rb < nf; rb++)
			rect_cell(g, &c->r, px + col, c->r.y + ph - 1 - rb, fullch, c->bar_attr);
		if (nf < ph) {
			wchar_t pc = partial_cell(fh - nf, c->utf8);
			if (!pc && nf == 0 && cv[col] > c->lo)
				pc = tiny;
			if (pc)
				rect_cell(g, &c->r, px + col, c->r.y + ph - 1 - nf, pc,
					  c->bar_attr);
			if (pc == fullch)
				nf++;
		}
		full[col] = nf;
	}
}

static void chart_marks(struct grid *g, const struct chart *c, int px, int ph, int ncols,
			const int *full, int *rows)
{
	/* Baseline and limit first, so the floor wins a shared row. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < c->nmarks; i++) {
			const struct chart_mark *mk = &c->marks[i];
			if ((mk->kind == MARK_FLOOR) != (pass == 1))
				continue;
			int rb = rows[i] = mark_row(c, mk, ph);
			if (rb < 0)
				continue;
			for (int col = 0; col < ncols; col++) {
				wchar_t ch;
				uint16_t a;
				if (full[col] > rb)
					continue;
				if (mk->kind == MARK_FLOOR) {
					ch = L'_';
					a = A_FLOOR;
				} else if (mk->kind == MARK_BASE) {
					/* "- - -": the gaps clear partial tops too,
					 * or the row would read "-:-:". */
					ch = c->utf8 ? 0x254c : (col % 2 ? L' ' : L'-'); /* ╌ */
					a = A_BASE;
				} else {
					ch = c->utf8 ? 0x2550 : L'='; /* ═ */
					a = A_LIMIT;
				}
				if (ch)
					rect_cell(g, &c->r, px + col, c->r.y + ph - 1 - rb, ch, a);
			}
		}
	}
}

/* The label column: each label on its marker's row if free, else on the
 * nearest free row (the axis row included); labels that find no row are
 * dropped, least important last in the list. */
static void chart_right(struct grid *g, const struct chart *c, int rx, int ph, const int *rows)
{
	bool used[64] = {false};
	int nrows = ph + 1 < 64 ? ph + 1 : 64;

	for (int i = 0; i < c->nlabels; i++) {
		const struct chart_label *l = &c->labels[i];
		int want = -1, row = -1;
		if (l->mark >= 0 && rows[l->mark] >= 0)
			want = ph - 1 - rows[l->mark]; /* from the top */
		if (want >= 0) {
			for (int d = 0; d < nrows && row < 0; d++) {
				if (want - d >= 0 && !used[want - d])
					row = want - d;
				else if (want + d < nrows && !used[want + d])
					row = want + d;
			}
		} else {
			for (int r = 0; r < nrows && row < 0; r++)
				if (!used[r])
					row = r;
		}
		if (row < 0)
			continue;
		used[row] = true;
		rect_put(g, &c->r, rx, c->r.y + row, l->attr, l->text);
	}
}

static void chart_axis(struct grid *g, const struct chart *c, int px, int ph, int ncols, int group)
{
	int ay = c->r.y + ph;
	char span[24], left[32];

	if (c->gutter_w > 0) {
		for (int rb = 0; rb < ph; rb++)
			rect_cell(g, &c->r, px - 1, c->r.y + rb, L'|', A_AXIS);
		rect_cell(g, &c->r, px - 1, ay, L'+', A_AXIS);
		rect_put(g, &c->r, c->r.x, ay, 0, c->title);
		int tw = c->gutter_w - 2; /* a space before the '|' */
		rect_put(g, &c->r, c->r.x + tw - text_width(c->top), c->r.y, 0, c->top);
		if (c->bottom[0] && ph >= 2)
			rect_put(g, &c->r, c->r.x + tw - text_width(c->bottom), c->r.y + ph - 1, 0,
				 c->bottom);
	}
	for (int col = 0; col < ncols; col++)
		rect_cell(g, &c->r, px + col, ay, L'-', A_AXIS);
	/* "-60s" for short windows (the usual case), "-5m", "-1h00m" beyond. */
	if ((long)ncols * group <= 120)
		snprintf(span, sizeof(span), "%lds", (long)ncols * group);
	else
		metrics_span_text((double)ncols * group, span, sizeof(span));
	snprintf(left, sizeof(left), "-%s", span);
	if (ncols >= (int)strlen(left) + 4)
		rect_put(g, &c->r, px, ay, A_AXIS, left);
	if (ncols >= 3)
		rect_put(g, &c->r, px + ncols - 3, ay, A_AXIS, "now");
}

static int chart_draw(struct grid *g, struct chart *c)
{
	int ph = c->r.h - 1, gw = c->gutter_w, rw = c->right_w, pw, group, ncols, px;
	unsigned win = c->window_s ? c->window_s : 1;
	int rows[3] = {-1, -1, -1};
	double *cv;
	int *full;

	if (ph < 1 || c->r.w < 4)
		return 0;
	if (c->r.w < gw + rw + 10)
		rw = 0; /* narrow: the labels go first */
	if (c->r.w < gw + 4)
		gw = 0;
	c->gutter_w = gw;
	pw = c->r.w - gw - rw;
	group = (int)((win + (unsigned)pw - 1) / (unsigned)pw);
	ncols = (int)((win + (unsigned)group - 1) / (unsigned)group);
	px = c->r.x + gw;
	if (c->hi <= c->lo)
		c->hi = c->lo + 1;

	cv = malloc((size_t)ncols * sizeof(double));
	full = malloc((size_t)ncols * sizeof(int));
	if (!cv || !full || chart_columns(c, ncols, group, cv) < 0) {
		free(cv);
		free(full);
		return -ENOMEM;
	}
	chart_bars(g, c, px, ph, ncols, cv, full);
	chart_marks(g, c, px, ph, ncols, full, rows);
	chart_axis(g, c, px, ph, ncols, group);
	if (!c->s->len)
		rect_put(g, &c->r, px + 1, c->r.y + (ph - 1) / 2, A_AXIS, "(collecting)");
	if (rw > 0)
		chart_right(g, c, px + ncols + 1, ph, rows);
	free(cv);
	free(full);
	return 0;
}

static void add_label(struct chart *c, int mark, uint16_t attr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_label(struct chart *c, int mark, uint16_t attr, const char *fmt, ...)
{
	va_list ap;

	if (c->nlabels >= 5)
		return;
	struct chart_label *l = &c->labels[c->nlabels++];
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
	l->mark = mark;
	l->attr = attr;
}

static int add_mark(struct chart *c, enum mark_kind kind, double v)
{
	c->marks[c->nmarks].kind = kind;
	c->marks[c->nmarks].v = v;
	return c->nmarks++;
}

/* ---- CPU ---- */

static void pct_text(double v, char *buf, size_t size)
{
	snprintf(buf, size, "%.0f%%", v);
}

int view_chart_cpu(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8)
{
	struct chart c;
	char now[16], peak[16], base[16], floor_[16];
	int mf, mb = -1;

	if (!g || !m)
		return -EINVAL;
	if (w <= 0 || h <= 0)
		return 0;
	pct_text(m->cpu_now, now, sizeof(now));
	pct_text(m->cpu_peak, peak, sizeof(peak));
	pct_text(m->cpu_baseline, base, sizeof(base));
	pct_text(m->cpu_floor, floor_, sizeof(floor_));
	if (h < 3) {
		/* Too short for a chart: the numbers, then a sparkline. */
		struct rect r = {x, y, w, h};
		char line[128];
		snprintf(line, sizeof(line), "CPU now %s  peak %s%s%s  floor %s", now, peak,
			 m->baseline_set ? "  base " : "", m->baseline_set ? base : "", floor_);
		rect_put(g, &r, x, y, 0, line);
		if (h == 2)
			view_sparkline(g, x, y + 1, w, &m->cpu, m->cpu_peak, utf8);
		return 0;
	}

	memset(&c, 0, sizeof(c));
	c.r = (struct rect){x, y, w, h};
	c.s = &m->cpu;
	c.now_t = m->last_t;
	c.window_s = m->cfg.window_s;
	c.title = "CPU %core";
	c.gutter_w = 11;
	c.right_w = 11;
	c.utf8 = utf8;
	c.bar_attr = A_BAR_CPU;
	double vmax = fmax(m->cpu_peak, m->cpu_floor);
	if (m->baseline_set)
		vmax = fmax(vmax, m->cpu_baseline);
	c.lo = 0;
	nice_range(0, vmax, 10, &c.lo, &c.hi);
	pct_text(c.hi, c.top, sizeof(c.top));
	if (m->baseline_set)
		mb = add_mark(&c, MARK_BASE, m->cpu_baseline);
	mf = add_mark(&c, MARK_FLOOR, m->cpu_floor);
	add_label(&c, mf, A_FLOOR, "floor%5s", floor_);
	if (mb >= 0)
		add_label(&c, mb, A_BASE, "base %5s", base);
	add_label(&c, -1, GRID_BOLD, "now  %5s", now);
	add_label(&c, -1, 0, "peak %5s", peak);
	return chart_draw(g, &c);
}

/* ---- memory ---- */

static void mem_trend_text(const struct metrics *m, char *buf, size_t size)
{
	const struct series_trend *tr = &m->mem_trend;
	char rate[32], span[32], lo[32], hi[32];

	if (m->rss.len < 10) {
		snprintf(buf, size, "collecting (%zus)", m->rss.len);
		return;
	}
	switch (tr->kind) {
	case SERIES_STAIRS:
		metrics_rate_text(tr->slope, rate, sizeof(rate));
		metrics_span_text(tr->since_drop_s, span, sizeof(span));
		snprintf(buf, size, "%s, no drops in %s: STAIRS, leak suspected", rate, span);
		break;
	case SERIES_ROLLERCOASTER:
		text_bytes((uint64_t)tr->peak_lo, lo, sizeof(lo));
		text_bytes((uint64_t)tr->peak_hi, hi, sizeof(hi));
		metrics_span_text(tr->drop_every_s, span, sizeof(span));
		if (!strcmp(lo, hi))
			snprintf(buf, size, "peaks %s, drops every ~%s: ROLLERCOASTER, healthy", hi,
				 span);
		else
			snprintf(buf, size, "peaks %s-%s, drops every ~%s: ROLLERCOASTER, healthy",
				 lo, hi, span);
		break;
	default:
		if (m->mem_rising) {
			/* Climbing, but not for long enough to call it: never
			 * "FLAT" next to a chart that goes up. */
			metrics_rate_text(tr->slope, rate, sizeof(rate));
			metrics_span_text(tr->span_s, span, sizeof(span));
			snprintf(buf, size, "%s over %s: RISING, too soon to call a leak", rate,
				 span);
			break;
		}
		metrics_span_text(tr->span_s, span, sizeof(span));
		snprintf(buf, size, "no trend over %s: FLAT", span);
		break;
	}
}

/* "MEM 812 MiB RSS (anon 790 MiB, file 22 MiB)  +96 MiB/h, ...: STAIRS, ..." */
static void mem_line1(const struct metrics *m, char *buf, size_t size)
{
	char rss[32], anon[32], file[32], shmem[48] = "", trend[256];

	text_bytes(m->mem_now, rss, sizeof(rss));
	text_bytes(m->anon_now, anon, sizeof(anon));
	text_bytes(m->file_now, file, sizeof(file));
	if (m->shmem_now >= MIB && m->shmem_now * 100 >= m->mem_now) {
		char s[32];
		text_bytes(m->shmem_now, s, sizeof(s));
		snprintf(shmem, sizeof(shmem), ", shmem %s", s);
	}
	mem_trend_text(m, trend, sizeof(trend));
	snprintf(buf, size, "MEM %s RSS (anon %s, file %s%s)  %s", rss, anon, file, shmem, trend);
}

/* "limit 2.0 GiB (cgroup) reached in ~3h10m at this slope; anonymous grows",
 * or just the limit when nothing is rising; "" without a limit. */
static void mem_line2(const struct metrics *m, char *buf, size_t size)
{
	char lim[32], span[32];
	const char *src = m->mem_limit_src ? m->mem_limit_src : "?";
	bool grows = m->mem_growing && (m->mem_to_limit_s >= 0 || m->alert_stairs);

	buf[0] = '\0';
	if (!m->mem_limit) {
		if (grows)
			snprintf(buf, size, "%s memory grows", m->mem_growing);
		return;
	}
	text_bytes(m->mem_limit, lim, sizeof(lim));
	if (m->mem_to_limit_s >= 0) {
		metrics_span_text(m->mem_to_limit_s, span, sizeof(span));
		snprintf(buf, size, "limit %s (%s) reached in ~%s at this slope%s%s%s", lim, src,
			 span, grows ? "; " : "", grows ? m->mem_growing : "",
			 grows ? " memory grows" : "");
	} else {
		snprintf(buf, size, "limit %s (%s)%s%s%s", lim, src, grows ? "; " : "",
			 grows ? m->mem_growing : "", grows ? " memory grows" : "");
	}
}

int view_chart_mem(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8)
{
	struct rect r = {x, y, w, h};
	struct chart c;
	char line[512], now[24], peak[24], low[24], lim[24];
	int nv, ml = -1;

	if (!g || !m)
		return -EINVAL;
	if (w <= 0 || h <= 0)
		return 0;
	mem_line1(m, line, sizeof(line));
	rect_put(g, &r, x, y, m->alert_stairs ? A_LIMIT : GRID_BOLD, line);
	mem_line2(m, line, sizeof(line));
	/* The second line when it says something and the chart keeps 3+ rows. */
	nv = 1;
	if (line[0] && (h <= 3 || h >= 6)) {
		rect_put(g, &r, x, y + 1, m->mem_to_limit_s >= 0 ? A_LIMIT : 0, line);
		nv = 2;
	}
	if (h < 4)
		return 0;

	memset(&c, 0, sizeof(c));
	c.r = (struct rect){x, y + nv, w, h - nv};
	c.s = &m->rss;
	c.now_t = m->last_t;
	c.window_s = m->cfg.window_s;
	c.title = "RSS";
	c.gutter_w = 11;
	c.right_w = 15;
	c.utf8 = utf8;
	c.bar_attr = A_BAR_MEM;

	size_t n = m->rss.len;
	double *vv = malloc((n ? n : 1) * sizeof(double));
	if (!vv)
		return -ENOMEM;
	n = series_get(&m->rss, NULL, vv, n);
	double lo = series_min(vv, n), hi = series_max(vv, n);
	free(vv);
	text_bytes((uint64_t)(hi > 0 ? hi : 0), peak, sizeof(peak));
	text_bytes((uint64_t)(lo > 0 ? lo : 0), low, sizeof(low));
	text_bytes(m->mem_now, now, sizeof(now));
	/* Scale in MiB so the steps are round numbers of MiB. */
	if (m->mem_limit && (double)m->mem_limit <= 1.5 * hi) {
		nice_range(0, (double)m->mem_limit / MIB, 1, &c.lo, &c.hi);
	} else {
		nice_range(lo / MIB, hi / MIB, fmax(1, hi / MIB * 0.01), &c.lo, &c.hi);
		if (c.lo < 0)
			c.lo = 0;
	}
	text_bytes((uint64_t)llround(c.hi * MIB), c.top, sizeof(c.top));
	text_bytes((uint64_t)llround(c.lo * MIB), c.bottom, sizeof(c.bottom));
	c.lo *= MIB;
	c.hi *= MIB;
	if (m->mem_limit) {
		text_bytes(m->mem_limit, lim, sizeof(lim));
		if ((double)m->mem_limit <= c.hi)
			ml = add_mark(&c, MARK_LIMIT, (double)m->mem_limit);
		add_label(&c, ml, A_LIMIT, "limit %s", lim);
	}
	add_label(&c, -1, GRID_BOLD, "now   %s", now);
	add_label(&c, -1, 0, "peak  %s", peak);
	add_label(&c, -1, 0, "low   %s", low);
	return chart_draw(g, &c);
}

/* ---- alerts and sparklines ---- */

int view_alerts_render(struct grid *g, int y, const struct metrics *m)
{
	char buf[512];

	if (!g || !m || y < 0 || y >= g->h)
		return 0;
	metrics_alerts_text(m, buf, sizeof(buf));
	if (!buf[0])
		return 0;
	grid_fill(g, 0, y, g->w, L' ', A_ALERT);
	grid_put(g, 0, y, buf, A_ALERT, g->w);
	return 1;
}

/* One character per column, newest on the right; when there are more
 * points than columns, each column is the MAXIMUM of a group of points
 * (a burst stays visible). */
void view_sparkline(struct grid *g, int x, int y, int w, const struct series *s, double max,
		    bool utf8)
{
	struct rect r = {x, y, w, 1};
	size_t n, group, ncols;
	double *vv;

	if (!g || !s || w <= 0)
		return;
	for (int i = 0; i < w; i++)
		rect_cell(g, &r, x + i, y, L' ', 0);
	n = s->len;
	if (!n || !(vv = malloc(n * sizeof(double))))
		return;
	n = series_get(s, NULL, vv, n);
	if (max <= 0)
		max = series_max(vv, n);
	group = (n + (size_t)w - 1) / (size_t)w;
	ncols = (n + group - 1) / group;
	for (size_t col = 0; col < ncols && max > 0; col++) {
		/* Groups are counted from the newest point backwards. */
		double v = -1;
		for (size_t k = 0; k < group; k++) {
			size_t age = (ncols - 1 - col) * group + k;
			if (age < n && vv[n - 1 - age] > v)
				v = vv[n - 1 - age];
		}
		double f = v / max;
		wchar_t ch = 0;
		if (f > 0.005) {
			if (utf8) {
				long i = (long)ceil(f * 8 - 1e-9);
				ch = (wchar_t)(0x2580 + (i < 1 ? 1 : i > 8 ? 8 : i));
			} else {
				ch = f < 1.0 / 3 ? L'.' : f < 2.0 / 3 ? L':' : L'#';
			}
		}
		if (ch)
			rect_cell(g, &r, x + w - (int)ncols + (int)col, y, ch,
				  GRID_COLOR(GRID_C_GREEN));
	}
	free(vv);
}
