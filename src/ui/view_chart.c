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
 * The texts about the metrics (memory verdict, limit line, alerts, spans,
 * rates) are built here too, and the batch output uses the same functions,
 * so a log and the screen say the same words for the same state.
 *
 * Fills: ASCII " . : #" (a '.' or ':' tops a column of '#'), UTF-8 eighth
 * blocks ▁▂▃▄▅▆▇█ for the partial top cell. Any value above the bottom of
 * the scale shows at least a '.' / '▁', so short bursts are never blank.
 */
#include "stacktop/ui/view_chart.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/text.h"
#include "stacktop/ui/spark.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

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

/* ---- texts ---- */

void view_chart_span_text(double s, char *buf, size_t size)
{
	if (s < 0)
		s = 0;
	if (s < 59.5) {
		snprintf(buf, size, "%.0fs", s);
		return;
	}
	long min = lround(s / 60);
	if (min < 60)
		snprintf(buf, size, "%ldm", min);
	else if (min < 48 * 60)
		snprintf(buf, size, "%ldh%02ldm", min / 60, min % 60);
	else {
		long h = lround(s / 3600);
		snprintf(buf, size, "%ldd%02ldh", h / 24, h % 24);
	}
}

void view_chart_rate_text(double bytes_per_s, char *buf, size_t size)
{
	char b[24];

	/* Per minute on every screen (memory view, process table, MEM line):
	 * a responder compares the figures, so they share one unit. */
	text_bytes((uint64_t)llround(fabs(bytes_per_s) * 60), b, sizeof(b));
	snprintf(buf, size, "%c%s/min", bytes_per_s < 0 ? '-' : '+', b);
}

/* Several processes: the one behind the growth, "worker 4502" (its name
 * escaped, cut to keep the MEM line short), or "" when none stands out. */
static void grower_text(const struct metrics *m, char *buf, size_t size)
{
	char name[64], cut[64];

	buf[0] = '\0';
	if (!m->mem_grower_pid)
		return;
	text_sanitize(m->mem_grower_comm, name, sizeof(name));
	text_fit(name, 15, cut, sizeof(cut));
	snprintf(buf, size, "%s %d", cut, (int)m->mem_grower_pid);
}

/* Append one alert to buf, separated from the previous one. */
static void add_alert(char *buf, size_t size, const char *text)
{
	size_t len = strlen(buf);

	if (len + 1 >= size)
		return;
	snprintf(buf + len, size - len, "%s! %s", len ? "   " : "", text);
}

/* The floor threads, highest floor first (then the lower tid), at most
 * max of them. */
static int floor_threads(const struct metrics *m, int *idx, int max)
{
	int n = 0;

	while (n < max) {
		int best = -1;
		for (int i = 0; i < m->nthreads; i++) {
			const struct metrics_thread *th = &m->threads[i];
			bool taken = false;
			for (int k = 0; k < n; k++)
				taken |= idx[k] == i;
			if (!th->busy_floor || taken)
				continue;
			if (best < 0 || th->floor_pct > m->threads[best].floor_pct ||
			    (th->floor_pct == m->threads[best].floor_pct &&
			     th->tid < m->threads[best].tid))
				best = i;
		}
		if (best < 0)
			break;
		idx[n++] = best;
	}
	return n;
}

/* "BUSY FLOOR in the pauses between bursts: poller (4250) 30%, ...": every
 * thread that holds the floor, each with the figure of the threads view's
 * floor column (one figure a thread, so the two never disagree); the
 * process's level in the pauses only when no thread explains it. */
static void alert_busy_floor_text(const struct metrics *m, char *out, size_t size)
{
	enum { SHOWN = 4 };
	int idx[SHOWN] = {0}, n = floor_threads(m, idx, SHOWN), more = 0;
	size_t len;

	for (int i = 0; i < m->nthreads; i++)
		more += m->threads[i].busy_floor;
	more -= n;
	if (!n) {
		if (m->alert_floor < 100)
			snprintf(out, size,
				 "BUSY FLOOR %.0f%% of a core in the pauses between bursts",
				 m->alert_floor);
		else
			snprintf(out, size, "BUSY FLOOR %.1f cores in the pauses between bursts",
				 m->alert_floor / 100);
		return;
	}
	len = (size_t)snprintf(out, size, "BUSY FLOOR in the pauses between bursts:");
	for (int k = 0; k < n && len < size; k++) {
		const struct metrics_thread *th = &m->threads[idx[k]];
		char name[32];
		text_sanitize(th->comm, name, sizeof(name));
		len += (size_t)snprintf(out + len, size - len, "%s %s (%d) %.0f%%", k ? "," : "",
					name, (int)th->tid, th->floor_pct);
	}
	if (more > 0 && len < size)
		snprintf(out + len, size - len, ", %d more", more);
}

/* Append piece to out when it fits whole in width columns (0: any width):
 * a line cut at 80 columns ended mid-fact ("limit in ~3h21m: cache_put
 * (lea"); a piece that does not fit is left out, not cut. */
static void add_piece(char *out, size_t size, int width, const char *piece)
{
	size_t len = strlen(out);

	if (width > 0 && text_width(out) + text_width(piece) > width)
		return;
	snprintf(out + len, size - len, "%s", piece);
}

/* "MEM STAIRS +96 MiB/h, limit in ~3h21m: held by cache_put (anonymous,
 * worker 4502)": the verdict and its rate, then when the limit comes,
 * then who holds it, then what kind grows; each whole or not at all. One
 * rate, one unit: the holder's own rate is the memory view's. */
static void alert_stairs_text(const struct metrics *m, int width, char *out, size_t size)
{
	char rate[32], span[32], who[96], piece[256];

	view_chart_rate_text(m->mem_trend.slope, rate, sizeof(rate));
	grower_text(m, who, sizeof(who));
	snprintf(out, size, "MEM STAIRS %s", rate);
	if (m->mem_to_limit_s >= 0) {
		view_chart_span_text(m->mem_to_limit_s, span, sizeof(span));
		snprintf(piece, sizeof(piece), ", limit in ~%s", span);
		add_piece(out, size, width, piece);
	}
	if (m->mem_holder && m->mem_holder[0]) {
		char clean[160];
		text_sanitize(m->mem_holder, clean, sizeof(clean));
		snprintf(piece, sizeof(piece), ": held by %s", clean);
		add_piece(out, size, width, piece);
	}
	if (m->mem_growing || who[0]) {
		snprintf(piece, sizeof(piece), " (%s%s%s)", m->mem_growing ? m->mem_growing : "",
			 m->mem_growing && who[0] ? ", " : "", who);
		add_piece(out, size, width, piece);
	}
}

/* "; during spikes: sweep +70 pts, mark +12 pts" (model/spikes: the
 * functions whose share rises in spike seconds); "GC" first when the top
 * riser is the runtime's collector. Each name whole or not at all. */
static void riser_piece(const struct metrics *m, unsigned i, char *piece, size_t size)
{
	const struct rhythm_riser *r = &m->risers[i];
	char name[96];

	text_sanitize(r->func, name, sizeof(name));
	snprintf(piece, size, "%s%s%s +%.0f pts",
		 i ? ", " : "; during spikes: ", !i && r->gc ? "GC: " : "", name, r->pts);
}

static void rhythm_risers_text(const struct metrics *m, int width, char *out, size_t size)
{
	char piece[160];

	for (unsigned i = 0; i < m->nrisers && i < RHYTHM_RISERS; i++) {
		riser_piece(m, i, piece, sizeof(piece));
		size_t len = strlen(out);
		add_piece(out, size, width, piece);
		if (strlen(out) == len)
			break; /* a later name without the first reads wrong */
	}
}

/* " (+-1 s)": the spread, at least the 1 s the points resolve. */
static void spread_piece(const struct rhythm *r, char *piece, size_t size)
{
	snprintf(piece, size, " (+-%.0f s)", r->spread_s > 1 ? r->spread_s : 1.0);
}

/* "CPU spikes every 15 s (+-1 s), 3 s each, to 100% from 20%": the
 * period, then its spread, the spikes' length and their level over the
 * calm one, then what rises (the process's rhythm: risers); each whole or
 * not at all. who goes first ("thread worker (4502): " for a thread's). In
 * a narrow line the first riser goes before the facts after the period:
 * what runs in the spikes is the finding. */
static void spikes_text(const struct metrics *m, const struct rhythm *r, const char *who,
			bool risers, int width, char *out, size_t size)
{
	char piece[160];
	int rw = 0;

	if (risers && m->nrisers) {
		riser_piece(m, 0, piece, sizeof(piece));
		rw = text_width(piece);
	}
	int full = width;
	width = width > 0 ? (width - rw > 1 ? width - rw : 1) : 0;

	snprintf(out, size, "%sCPU spikes every %.0f s", who, r->period_s);
	spread_piece(r, piece, sizeof(piece));
	add_piece(out, size, width, piece);
	/* Tenths below 10 s (a 1.5 s spike), whole seconds otherwise. */
	if (r->duration_s < 9.95 && fabs(r->duration_s - round(r->duration_s)) >= 0.05)
		snprintf(piece, sizeof(piece), ", %.1f s each", r->duration_s);
	else
		snprintf(piece, sizeof(piece), ", %.0f s each", r->duration_s);
	add_piece(out, size, width, piece);
	snprintf(piece, sizeof(piece), ", to %.0f%% from %.0f%%", r->level, r->calm);
	add_piece(out, size, width, piece);
	if (risers)
		rhythm_risers_text(m, full, out, size);
}

/* "thread worker (4502): CPU spikes every 5 s ...": one thread's rhythm
 * while the process's sum has none. */
static void alert_thread_rhythm_text(const struct metrics *m, int width, char *out, size_t size)
{
	char name[64], who[96];

	text_sanitize(m->rhythm_comm, name, sizeof(name));
	snprintf(who, sizeof(who), "thread %s (%d): ", name[0] ? name : "?", (int)m->rhythm_tid);
	spikes_text(m, &m->thread_rhythm, who, false, width, out, size);
}

/* "RSS swings every 10 s (+-1 s), falling 48 MiB": a memory that rises
 * and falls on a cadence (a collector's sawtooth), by its median fall. */
static void alert_mem_rhythm_text(const struct metrics *m, int width, char *out, size_t size)
{
	char piece[96], fall[32];

	snprintf(out, size, "RSS swings every %.0f s", m->mem_rhythm.period_s);
	spread_piece(&m->mem_rhythm, piece, sizeof(piece));
	add_piece(out, size, width, piece);
	text_bytes((uint64_t)llround(m->mem_rhythm.level), fall, sizeof(fall));
	snprintf(piece, sizeof(piece), ", falling %s", fall);
	add_piece(out, size, width, piece);
}

/* One alert after the others: whole when it fits the width left, else
 * counted in *dropped (the first is always added: the grid cuts it). */
static void add_alert_fit(char *buf, size_t size, int width, const char *text, int *dropped)
{
	size_t len = strlen(buf);

	if (width > 0 && len && text_width(buf) + 5 + text_width(text) > width) {
		(*dropped)++;
		return;
	}
	add_alert(buf, size, text);
}

/* Room left for one more alert's text after what buf holds ("   ! "). */
static int room_after(const char *buf, int width)
{
	int used = buf[0] ? text_width(buf) + 5 : 2;

	return width > 0 ? (width - used > 1 ? width - used : 1) : 0;
}

void view_chart_alerts_fit(const struct metrics *m, int width, char *buf, size_t size)
{
	char one[320], span[32];
	bool mem_urgent;
	int dropped = 0;

	if (!size)
		return;
	buf[0] = '\0';
	if (!m)
		return;
	mem_urgent = m->alert_stairs && m->mem_to_limit_s >= 0 && m->mem_to_limit_s < 3600;
	if (mem_urgent) {
		alert_stairs_text(m, room_after(buf, width), one, sizeof(one));
		add_alert_fit(buf, size, width, one, &dropped);
	}
	if (m->alert_spike && m->cpu_baseline > 0) {
		view_chart_span_text(m->spike_held_s, span, sizeof(span));
		snprintf(one, sizeof(one), "CPU %.1fx baseline for %s",
			 m->cpu_now / m->cpu_baseline, span);
		add_alert_fit(buf, size, width, one, &dropped);
	}
	if (m->alert_stairs && !mem_urgent) {
		alert_stairs_text(m, room_after(buf, width), one, sizeof(one));
		add_alert_fit(buf, size, width, one, &dropped);
	}
	if (m->alert_busy_floor) {
		alert_busy_floor_text(m, one, sizeof(one));
		add_alert_fit(buf, size, width, one, &dropped);
	}
	/* Last: a cadence is a finding, the others call for action. */
	if (m->alert_rhythm) {
		spikes_text(m, &m->rhythm, "", true, room_after(buf, width), one, sizeof(one));
		add_alert_fit(buf, size, width, one, &dropped);
	}
	if (m->alert_thread_rhythm) {
		alert_thread_rhythm_text(m, room_after(buf, width), one, sizeof(one));
		add_alert_fit(buf, size, width, one, &dropped);
	}
	if (m->alert_mem_rhythm) {
		alert_mem_rhythm_text(m, room_after(buf, width), one, sizeof(one));
		add_alert_fit(buf, size, width, one, &dropped);
	}
	if (dropped) {
		snprintf(one, sizeof(one), "   +%d more", dropped);
		add_piece(buf, size, width, one);
	}
}

void view_chart_alerts_text(const struct metrics *m, char *buf, size_t size)
{
	view_chart_alerts_fit(m, 0, buf, size);
}

static void pct_text(double v, char *buf, size_t size)
{
	snprintf(buf, size, "%.0f%%", v);
}

/* Narrowed to a thread, the CPU and MEM lines say they are not. */
static const char *wide_text(const struct metrics *m, bool process_wide)
{
	if (!process_wide)
		return "";
	if (m->box)
		return " (whole machine)";
	return m->multi ? " (all processes)" : " (process)";
}

/* The floor is the p10 of the window: it reads above "now" right after a
 * drop. Then say what it is, so "floor 40%" next to "now 5%" is not read
 * as a contradiction. */
static bool floor_above_now(const struct metrics *m)
{
	return !m->exited && lround(m->cpu_floor) > lround(m->cpu_now);
}

/* "now 187%", or "exited": the last second of a process that is gone is
 * no live figure. */
static void now_text(const struct metrics *m, char *buf, size_t size)
{
	if (m->exited)
		snprintf(buf, size, "exited");
	else if (!m->cpu.len)
		snprintf(buf, size, "measuring");
	else
		pct_text(m->cpu_now, buf, size);
}

void view_chart_cpu_text(const struct metrics *m, bool process_wide, char *buf, size_t size)
{
	char now[16], peak[16], base[16], floor_[16], why[32] = "";

	/* Nothing measured yet (a frame within 0.2 s of start-up): no 0%. */
	if (!m->cpu.len && !m->exited) {
		snprintf(buf, size, "CPU%s measuring", wide_text(m, process_wide));
		return;
	}
	now_text(m, now, sizeof(now));
	pct_text(m->cpu_peak, peak, sizeof(peak));
	pct_text(m->cpu_baseline, base, sizeof(base));
	pct_text(m->cpu_floor, floor_, sizeof(floor_));
	if (floor_above_now(m))
		snprintf(why, sizeof(why), " (p10 of %us)", m->cfg.window_s);
	snprintf(buf, size, "CPU%s %s%s  peak %s%s%s  floor %s%s", wide_text(m, process_wide),
		 m->exited ? "" : "now ", now, peak, m->baseline_set ? "  base " : "",
		 m->baseline_set ? base : "", floor_, why);
}

/* The memory trend in words, verdict word first: at 80 columns the line
 * is cut on the right, and "RISING, too s" or "no drops in 32s: STA" left
 * the reader without the one word that matters. */
static void mem_trend_text(const struct metrics *m, char *buf, size_t size)
{
	const struct series_trend *tr = &m->mem_trend;
	char rate[160], span[32], lo[32], hi[32], who[96];

	if (m->rss.len < METRICS_TREND_MIN_S) {
		snprintf(buf, size, "collecting (%zus of memory data, a verdict after %ds)",
			 m->rss.len, METRICS_TREND_MIN_S);
		return;
	}
	/* The rate names the process behind it: "+40 MiB/min (worker 4502)". */
	view_chart_rate_text(tr->slope, rate, sizeof(rate));
	grower_text(m, who, sizeof(who));
	if (who[0] && strlen(rate) + strlen(who) + 4 < sizeof(rate))
		snprintf(rate + strlen(rate), sizeof(rate) - strlen(rate), " (%s)", who);
	switch (tr->kind) {
	case SERIES_STAIRS:
		view_chart_span_text(tr->since_drop_s, span, sizeof(span));
		snprintf(buf, size, "STAIRS, leak suspected: %s, no drops in %s", rate, span);
		break;
	case SERIES_ROLLERCOASTER:
		text_bytes((uint64_t)tr->peak_lo, lo, sizeof(lo));
		text_bytes((uint64_t)tr->peak_hi, hi, sizeof(hi));
		view_chart_span_text(tr->drop_every_s, span, sizeof(span));
		if (!strcmp(lo, hi))
			snprintf(buf, size, "ROLLERCOASTER, healthy: peaks %s, drops every ~%s", hi,
				 span);
		else
			snprintf(buf, size, "ROLLERCOASTER, healthy: peaks %s-%s, drops every ~%s",
				 lo, hi, span);
		break;
	default:
		if (m->mem_rising) {
			/* Climbing, but not for long enough to call it: never
			 * "FLAT" next to a chart that goes up. */
			view_chart_span_text(tr->span_s, span, sizeof(span));
			snprintf(buf, size, "RISING, too soon to call a leak: %s over %s", rate,
				 span);
			break;
		}
		view_chart_span_text(tr->span_s, span, sizeof(span));
		snprintf(buf, size, "FLAT: no trend over %s", span);
		break;
	}
}

void view_chart_heap_text(const struct metrics *m, char *buf, size_t size)
{
	char used[32], comm[32], rss[32], out[32];

	buf[0] = '\0';
	if (!m->rt_heap)
		return;
	text_bytes(m->rt_heap_used, used, sizeof(used));
	text_bytes(m->rt_heap_committed, comm, sizeof(comm));
	text_bytes(m->mem_now, rss, sizeof(rss));
	text_bytes(m->mem_now > m->rt_heap_committed ? m->mem_now - m->rt_heap_committed : 0, out,
		   sizeof(out));
	snprintf(buf, size, "%s heap %s of %s, RSS %s: %s outside the heap",
		 m->rt_name ? m->rt_name : "Java", used, comm, rss, out);
}

/* Where a runtime's memory grows (a JVM's, a Go program's): on its heap when the committed heap
 * took at least half of the RSS growth since the first reading, else outside it (threads, direct
 * buffers, metaspace, native code, cgo): "on" or "outside"; NULL when not known or not growing. */
static const char *heap_growth(const struct metrics *m)
{
	uint64_t rss_up, heap_up;

	if (!m->rt_heap || m->mem_now <= m->rt_rss0)
		return NULL;
	rss_up = m->mem_now - m->rt_rss0;
	heap_up = m->rt_heap_committed > m->rt_heap_committed0
		      ? m->rt_heap_committed - m->rt_heap_committed0
		      : 0;
	return heap_up * 2 >= rss_up ? "on" : "outside";
}

/* "MEM 54 MiB RSS  STAIRS, ...  (anon 52 MiB, file 1.2 MiB)": the size and
 * the verdict first, the breakdown last and only whole: at 80 columns it
 * read "(anon 104" (width 0: any width). */
void view_chart_mem_fit(const struct metrics *m, bool process_wide, int width, char *buf,
			size_t size)
{
	char rss[32], anon[32], file[32], shmem[48] = "", trend[256], split[160];

	if (!m->rss.len && !m->exited) {
		snprintf(buf, size, "MEM%s measuring", wide_text(m, process_wide));
		return;
	}
	text_bytes(m->mem_now, rss, sizeof(rss));
	text_bytes(m->anon_now, anon, sizeof(anon));
	text_bytes(m->file_now, file, sizeof(file));
	if (m->shmem_now >= MIB && m->shmem_now * 100 >= m->mem_now) {
		char s[32];
		text_bytes(m->shmem_now, s, sizeof(s));
		snprintf(shmem, sizeof(shmem), ", shmem %s", s);
	}
	mem_trend_text(m, trend, sizeof(trend));
	if (m->rt_heap) {
		char heap[160];

		view_chart_heap_text(m, heap, sizeof(heap));
		const char *where = heap_growth(m);

		if (where && (m->mem_trend.kind == SERIES_STAIRS || m->mem_rising))
			snprintf(trend + strlen(trend), sizeof(trend) - strlen(trend),
				 "; growth %s the %s heap", where,
				 m->rt_name ? m->rt_name : "Java");
		snprintf(buf, size, "MEM%s %s  %s", wide_text(m, process_wide), heap, trend);
	} else if (m->box) {
		/* the box's memory in use (its RAM is the limit line's) */
		snprintf(buf, size, "MEM%s %s used  %s", wide_text(m, process_wide), rss, trend);
		return; /* no anon/file split: it is the box's */
	} else {
		snprintf(buf, size, "MEM%s %s RSS  %s", wide_text(m, process_wide), rss, trend);
	}
	snprintf(split, sizeof(split), "  (anon %s, file %s%s)", anon, file, shmem);
	add_piece(buf, size, width, split);
}

void view_chart_mem_text(const struct metrics *m, bool process_wide, char *buf, size_t size)
{
	view_chart_mem_fit(m, process_wide, 0, buf, size);
}

void view_chart_mem_limit_text(const struct metrics *m, char *buf, size_t size)
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
		view_chart_span_text(m->mem_to_limit_s, span, sizeof(span));
		snprintf(buf, size, "limit %s (%s) reached in ~%s at this slope%s%s%s", lim, src,
			 span, grows ? "; " : "", grows ? m->mem_growing : "",
			 grows ? " memory grows" : "");
	} else {
		snprintf(buf, size, "limit %s (%s)%s%s%s", lim, src, grows ? "; " : "",
			 grows ? m->mem_growing : "", grows ? " memory grows" : "");
	}
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
	const char *note;  /* on the axis row after the span, when it fits; NULL: none */
	/* A rhythm (0: none): '^' on the axis at each spike onset it
	 * predicts, back from the newest spike's onset by the period, over
	 * the seconds the chart has points for (from first_t). */
	double period_s, onset_t, first_t;
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
	for (double t = c->onset_t;
	     c->period_s >= 1 && t > c->now_t - (double)ncols * group && t >= c->first_t - 0.5;
	     t -= c->period_s) {
		long k = lround(c->now_t - t); /* seconds ago, as chart_columns */
		if (k >= 0 && k < (long)ncols * group)
			rect_cell(g, &c->r, px + ncols - 1 - (int)(k / group), ay, L'^', GRID_BOLD);
	}
	/* "-60s" for short windows (the usual case), "-5m", "-1h00m" beyond. */
	if ((long)ncols * group <= 120)
		snprintf(span, sizeof(span), "%lds", (long)ncols * group);
	else
		view_chart_span_text((double)ncols * group, span, sizeof(span));
	snprintf(left, sizeof(left), "-%s", span);
	if (ncols >= (int)strlen(left) + 4)
		rect_put(g, &c->r, px, ay, A_AXIS, left);
	if (c->note && ncols >= (int)strlen(left) + text_width(c->note) + 8) {
		char note[80];
		snprintf(note, sizeof(note), " %s ", c->note);
		rect_put(g, &c->r, px + (ncols - text_width(note)) / 2, ay, GRID_BOLD, note);
	}
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

/* A chart of series s of m in r, over m's window, with an 11-column gutter
 * and a right column of right_w; marks, labels and the scale come after. */
static void chart_init(struct chart *c, struct rect r, const struct metrics *m,
		       const struct series *s, const char *title, int right_w, bool utf8,
		       uint16_t bar_attr)
{
	*c = (struct chart){.r = r,
			    .s = s,
			    .now_t = m->last_t,
			    .window_s = m->cfg.window_s,
			    .title = title,
			    .gutter_w = 11,
			    .right_w = right_w,
			    .utf8 = utf8,
			    .bar_attr = bar_attr};
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

int view_chart_cpu(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8)
{
	return view_chart_cpu_scoped(g, x, y, w, h, m, utf8, false);
}

int view_chart_cpu_scoped(struct grid *g, int x, int y, int w, int h, const struct metrics *m,
			  bool utf8, bool process_wide)
{
	struct chart c;
	char now[16], peak[16], base[16], floor_[16];
	int mf, mb = -1;

	if (!g || !m)
		return -EINVAL;
	if (w <= 0 || h <= 0)
		return 0;
	now_text(m, now, sizeof(now));
	pct_text(m->cpu_peak, peak, sizeof(peak));
	pct_text(m->cpu_baseline, base, sizeof(base));
	pct_text(m->cpu_floor, floor_, sizeof(floor_));
	if (h < 3) {
		/* Too short for a chart: the numbers, then a sparkline. */
		struct rect r = {x, y, w, h};
		char line[160];
		view_chart_cpu_text(m, process_wide, line, sizeof(line));
		rect_put(g, &r, x, y, 0, line);
		if (h == 2) {
			/* A sparkline alone under the MEM line read as memory's:
			 * it says what it is and over how long. */
			char label[32];
			int lw = snprintf(label, sizeof(label), "CPU last %us ", m->cfg.window_s);
			if (lw >= w / 2)
				lw = 0;
			if (lw)
				grid_put(g, x, y + 1, label, GRID_DIM, lw);
			view_sparkline(g, x + lw, y + 1, w - lw, &m->cpu, m->cpu_peak, utf8);
		}
		return 0;
	}

	chart_init(&c, (struct rect){x, y, w, h}, m, &m->cpu, "CPU %core", 11, utf8, A_BAR_CPU);
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
	add_label(&c, -1, GRID_BOLD, m->exited ? "%s" : "now  %5s", now);
	add_label(&c, -1, 0, "peak %5s", peak);
	if (floor_above_now(m))
		add_label(&c, -1, A_FLOOR, "p10 of %us", c.window_s);
	if (process_wide)
		c.note = m->multi ? "all processes" : "process-wide";
	char every[40];
	if (m->alert_rhythm && m->rhythm.period_s >= 1) {
		c.period_s = m->rhythm.period_s;
		c.onset_t = m->rhythm.onset_t;
		c.first_t = m->t0; /* the first point */
		snprintf(every, sizeof(every), "^ spikes every %.0f s", m->rhythm.period_s);
		if (!c.note)
			c.note = every;
	}
	return chart_draw(g, &c);
}

/* ---- memory ---- */

int view_chart_mem(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8)
{
	return view_chart_mem_scoped(g, x, y, w, h, m, utf8, false);
}

int view_chart_mem_scoped(struct grid *g, int x, int y, int w, int h, const struct metrics *m,
			  bool utf8, bool process_wide)
{
	struct rect r = {x, y, w, h};
	struct chart c;
	char line[512], now[24], peak[24], low[24], lim[24];
	int nv, ml = -1;

	if (!g || !m)
		return -EINVAL;
	if (w <= 0 || h <= 0)
		return 0;
	view_chart_mem_fit(m, process_wide, w, line, sizeof(line));
	rect_put(g, &r, x, y, m->alert_stairs ? A_LIMIT : GRID_BOLD, line);
	view_chart_mem_limit_text(m, line, sizeof(line));
	/* The second line when it says something and the chart keeps 3+ rows. */
	nv = 1;
	if (line[0] && (h <= 3 || h >= 6)) {
		rect_put(g, &r, x, y + 1, m->mem_to_limit_s >= 0 ? A_LIMIT : 0, line);
		nv = 2;
	}
	if (h < 4)
		return 0;

	chart_init(&c, (struct rect){x, y + nv, w, h - nv}, m, &m->rss, "RSS", 15, utf8, A_BAR_MEM);

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
	view_chart_alerts_fit(m, g->w, buf, sizeof(buf));
	if (!buf[0])
		return 0;
	grid_fill(g, 0, y, g->w, L' ', A_ALERT);
	grid_put(g, 0, y, buf, A_ALERT, g->w);
	return 1;
}

/* One character per column, newest on the right; when there are more
 * points than columns, each column is the MAXIMUM of a group of points
 * (a burst stays visible). The cells are spark_draw's. */
void view_sparkline(struct grid *g, int x, int y, int w, const struct series *s, double max,
		    bool utf8)
{
	struct rect r = {x, y, w, 1};
	size_t n, group, ncols;
	double *vv, *cv;

	if (!g || !s || w <= 0)
		return;
	for (int i = 0; i < w; i++)
		rect_cell(g, &r, x + i, y, L' ', 0);
	n = s->len;
	/* the points, then one value per column */
	if (!n || !(vv = malloc((n + (size_t)w) * sizeof(double))))
		return;
	n = series_get(s, NULL, vv, n);
	if (max <= 0)
		max = series_max(vv, n);
	group = n ? (n + (size_t)w - 1) / (size_t)w : 1;
	ncols = (n + group - 1) / group;
	cv = vv + n;
	for (size_t col = 0; col < ncols; col++) {
		/* Groups are counted from the newest point backwards. */
		cv[col] = -1;
		for (size_t k = 0; k < group; k++) {
			size_t age = (ncols - 1 - col) * group + k;
			if (age < n && vv[n - 1 - age] > cv[col])
				cv[col] = vv[n - 1 - age];
		}
	}
	spark_draw(g, x + w - (int)ncols, y, cv, (int)ncols, max, utf8);
	free(vv);
}
