/*
 * view_memory — the memory view: the mappings that grow, the code paths
 * that hold the growth (see view_memory.h for the picture).
 *
 * Column plan: fixed widths for the numbers, the rest for the mapping's
 * path or the code path's label, both target text, sanitized and cut by
 * text_fit. The mappings table takes at most half the rows left (at least
 * three), the code paths what remains; at 80x24 that is six mappings and
 * eight code paths.
 */
#include "stacktop/ui/view_memory.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/ui/keymap.h"
#include "stacktop/ui/view_chart.h"
#include "stacktop/ui/keys.h"
#include "stacktop/memory/memhold.h"
#include "stacktop/memory/memmap.h"
#include "stacktop/memory/memtrace.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/text.h"

#define HDR_ATTR GRID_COLOR(GRID_C_HEADER)
#define NUM_W 9
#define KIND_W 5
#define MAPS_W 6
#define FAULTS_W 7
#define LABEL_MAX 256

static const char footer[] =
    " 1 top  2 icicle  3 threads  4 memory  \xe2\x86\x91\xe2\x86\x93 scroll  "
    "space pause  ? help  q quit";
static const char footer_ascii[] =
    " 1 top  2 icicle  3 threads  4 memory  space pause  ? help  q quit";

void view_memory_state_free(struct view_memory_state *st)
{
	ARRAY_FREE_ALL(st->maps, st->holders);
	st->maps = NULL;
	st->holders = NULL;
	st->nmaps = st->nholders = 0;
}

/* "+24 MiB", "-3.0 MiB", "0 B". */
static void signed_bytes(int64_t v, char *out, size_t size)
{
	if (size < 2)
		return;
	out[0] = v > 0 ? '+' : '-';
	text_bytes((uint64_t)(v < 0 ? -v : v), out + (v != 0), size - 1);
}

static int map_cmp(const void *a, const void *b)
{
	const struct view_memory_map *x = a, *y = b;

	return ARRAY_CMP(y->delta_kb, x->delta_kb) ?: ARRAY_CMP(y->rss_kb, x->rss_kb)
		   ?: strcmp(x->name, y->name);
}

/* Mapping rows with something resident or a change, sorted by growth; the
 * split of the growth by kind. */
static int take_maps(struct view_memory_state *st, const struct memmap *mm, uint64_t since)
{
	struct view_memory_map *v = calloc((size_t)mm->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	int n = 0;
	memset(st->grow_kb, 0, sizeof(st->grow_kb));
	st->span_s = 0;
	for (int r = 0; r < mm->n; r++) {
		struct view_memory_map *m = &v[n];
		double span;
		memmap_change(mm, r, since, &m->rss_kb, &m->delta_kb, &span);
		if (span > st->span_s)
			st->span_s = span;
		enum memmap_kind k = mm->rows[r].kind;
		st->grow_kb[memmap_kind_anon(k) ? 0 : k == MEMMAP_FILE ? 1 : 2] += m->delta_kb;
		if (!m->rss_kb && !m->delta_kb)
			continue;
		m->r = r;
		m->nmaps = mm->rows[r].nmaps;
		m->per_min_kb = span > 0 ? m->delta_kb * 60.0 / span : 0;
		snprintf(m->kind, sizeof(m->kind), "%s", memmap_kind_name(k));
		snprintf(m->name, sizeof(m->name), "%s", mm->rows[r].name);
		n++;
	}
	qsort(v, (size_t)n, sizeof(*v), map_cmp);
	st->maps = v;
	st->nmaps = n;
	return 0;
}

/* The allocator's and the loader's own frames name no culprit. */
static bool uninteresting(const struct frame *f)
{
	static const char *const skip[] = {"libc.so",	 "libc-",	"ld-linux",    "ld-musl",
					   "libpthread", "libjemalloc", "libtcmalloc", "[vdso]"};
	if (!f || f->kernel || f->wait)
		return true;
	const char *m = f->sym.module ? f->sym.module : "";
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strncmp(m, skip[i], strlen(skip[i])))
			return true;
	return false;
}

static void frame_text(const struct frame *f, bool full, char *out, size_t size)
{
	char sn[512];

	if (!f) {
		snprintf(out, size, "?");
	} else if (f->sym.func && f->sym.file && f->sym.line > 0) {
		snprintf(out, size, "%s (%s:%d)", view_func_name(f->sym.func, full, sn, sizeof(sn)),
			 f->sym.file, f->sym.line);
	} else if (f->sym.func) {
		snprintf(out, size, "%s", view_func_name(f->sym.func, full, sn, sizeof(sn)));
	} else {
		snprintf(out, size, "%s+0x%llx", f->sym.module ? f->sym.module : "?",
			 (unsigned long long)f->sym.offset);
	}
}

/* "func (file:line) < caller": the innermost interesting frame (the
 * innermost Python one in a CPython) and its caller; the leaf when every
 * frame is the allocator's. */
static void label_of(struct frames *fr, const uint32_t *ids, int n, bool full, char *out,
		     size_t size, char *func, size_t fsize)
{
	char sn[512];
	int i = n - 1;
	while (i > 0 && uninteresting(frames_get(fr, ids[i])))
		i--;
	/* A Python program's culprit is its innermost Python frame: the
	 * interpreter's frames above it are the runtime's, not a code path. */
	for (int k = n - 1; k >= 0; k--) {
		const struct frame *f = frames_get(fr, ids[k]);

		if (f && f->lang == FRAME_LANG_PYTHON) {
			i = k;
			break;
		}
	}
	if (n <= 0) {
		snprintf(out, size, "[no stack]");
		snprintf(func, fsize, "[no stack]");
		return;
	}
	frame_text(frames_line(fr, ids[i]), full, out, size);
	const struct frame *holder = frames_get(fr, ids[i]);
	snprintf(func, fsize, "%.120s",
		 holder && holder->sym.func ? view_func_name(holder->sym.func, full, sn, sizeof(sn))
					    : out);
	size_t len = strlen(out);
	const struct frame *caller = i > 0 ? frames_get(fr, ids[i - 1]) : NULL;
	if (caller && len + 4 < size) {
		/* The caller by its name only: the line is the holder's. */
		memcpy(out + len, " < ", 4);
		if (caller->sym.func)
			snprintf(out + len + 3, size - len - 3, "%s",
				 view_func_name(caller->sym.func, full, sn, sizeof(sn)));
		else
			frame_text(caller, full, out + len + 3, size - len - 3);
	}
}

/* Stacks that differ only below the two frames a label names (the
 * allocator's own frames, a deeper caller) read as one code path: one row,
 * their figures added up, not four rows that look the same. Returns the
 * rows left, in their order (the ranking's, by the first of each). */
static int merge_same_labels(struct view_memory_holder *v, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		int j = 0;
		while (j < k && strcmp(v[j].label, v[i].label))
			j++;
		if (j < k) {
			v[j].held += v[i].held;
			v[j].held_window += v[i].held_window;
			v[j].faults += v[i].faults;
			v[j].per_min += v[i].per_min;
			continue;
		}
		if (k != i)
			v[k] = v[i];
		k++;
	}
	return k;
}

static int take_holders(struct view_memory_state *st, const struct view_memory_input *in, int want)
{
	struct memhold_row *rows;
	int n;
	struct memhold *h = in->hold;
	int e = memhold_rank(h, in->now_ns, &rows, &n);
	if (e)
		return e;
	if (n > want)
		n = want;
	st->holders = calloc((size_t)n + 1, sizeof(*st->holders));
	if (!st->holders) {
		free(rows);
		return -ENOMEM;
	}
	double span = fmin(st->trace_s, (double)in->window_s);
	for (int i = 0; i < n; i++) {
		struct view_memory_holder *v = &st->holders[i];
		int nf = 0;
		const uint32_t *ids = memhold_frames(h, rows[i].stack, &nf);
		v->held = rows[i].held;
		v->held_window = rows[i].held_window;
		v->faults = rows[i].faults;
		v->per_min = span > 1 ? v->held_window * 60.0 / span : 0;
		if (ids && in->fr)
			label_of(in->fr, ids, nf, st->full_names, v->label, sizeof(v->label),
				 v->func, sizeof(v->func));
	}
	st->nholders = merge_same_labels(st->holders, n);
	free(rows);
	return 0;
}

int view_memory_update(struct view_memory_state *st, const struct view_memory_input *in, int cols,
		       int rows)
{
	view_memory_state_free(st);
	st->started = in->mm != NULL;
	st->tracing = in->hold != NULL;
	snprintf(st->trace_err, sizeof(st->trace_err), "%s", in->trace_err ? in->trace_err : "");
	st->heap[0] = '\0';
	st->heap_na = in->metrics && !in->metrics->rt_heap && in->metrics->rt_unread;
	if (st->heap_na)
		snprintf(st->heap, sizeof(st->heap), "%s heap: not available (%s)",
			 in->metrics->rt_unread,
			 in->metrics->rt_unread_why ? in->metrics->rt_unread_why
						    : "stacktop reads a JVM's from its hsperfdata");
	if (in->metrics && in->metrics->rt_heap) {
		size_t o;

		view_chart_heap_text(in->metrics, st->heap, sizeof(st->heap));
		o = strlen(st->heap);
		/* Go counts only its stop-the-world pauses */
		snprintf(st->heap + o, sizeof(st->heap) - o, "  (%llu collections, %.1f s of GC%s)",
			 (unsigned long long)in->metrics->rt_gc_count, in->metrics->rt_gc_time_s,
			 in->metrics->rt_name && !strcmp(in->metrics->rt_name, "Go") ? " pauses"
										     : "");
	}
	if (!in->mm)
		return 0;
	uint64_t win = (uint64_t)in->window_s * 1000000000ull;
	uint64_t since = in->now_ns > win ? in->now_ns - win : 0;
	st->interval_ns = in->mm->interval_ns;
	st->cost_ns = in->mm->cost_ns;
	st->nmappings = in->mm->nmappings;
	st->nanon = in->mm->nanon;
	st->smaps_err = in->mm->last_err;
	st->trace_s = in->now_ns > in->since_ns ? (in->now_ns - in->since_ns) / 1e9 : 0;
	int e = take_maps(st, in->mm, since);
	if (e || !in->hold)
		return e;
	st->period = in->trace.period;
	st->fault_period = in->trace.fault_period;
	st->lost = in->trace.lost;
	st->page = rows / 3 > 1 ? rows / 3 : 1; /* about the code paths' share of the screen */
	/* Name only what can be shown: a batch screen's worth at most. */
	return take_holders(st, in, rows > 0 ? rows : 40);
}

/* Arrows, PgUp/PgDn, Home/End scroll the code paths. */
static struct view_action memory_scroll(void *ctx, int key)
{
	struct view_memory_state *st = ctx;
	int page = st->page > 0 ? st->page : 1;

	view_move_selection(&st->scroll, key, page);
	if (st->scroll > st->nholders - page)
		st->scroll = st->nholders - page;
	if (st->scroll < 0)
		st->scroll = 0;
	return keymap_used(true);
}

static const struct keymap_entry memory_keys[] = {
    {{KEYS_UP, KEYS_DOWN, KEYS_PGUP, KEYS_PGDN, KEYS_HOME, KEYS_END},
     0,
     memory_scroll,
     "\xe2\x86\x91\xe2\x86\x93 PgUp/Dn",
     "scroll the code paths",
     0},
};

const struct keymap view_memory_keymap = {"Memory view", memory_keys,
					  sizeof(memory_keys) / sizeof(memory_keys[0]), true};

struct view_action view_memory_key(struct view_memory_state *st, int key)
{
	return keymap_act(&view_memory_keymap, st, key);
}

void view_memory_top_holder(const struct view_memory_state *st, char *buf, size_t size)
{
	buf[0] = '\0';
	if (!st->nholders || !st->holders[0].held_window)
		return;
	snprintf(buf, size, "%s", st->holders[0].func);
}

/* ---- render ---- */

/* The growth split (anonymous, the on-heap side, first), then how often
 * smaps is read, right-aligned, with its cost when there is room. */
static void draw_split(struct grid *g, int y, const struct view_memory_state *st)
{
	char a[32], f[32], s[32], left[256], right[96], cost[32], iv[32];
	double per = st->span_s > 0 ? 60.0 / st->span_s * 1024 : 0;
	signed_bytes((int64_t)(st->grow_kb[0] * per), a, sizeof(a));
	signed_bytes((int64_t)(st->grow_kb[1] * per), f, sizeof(f));
	signed_bytes((int64_t)(st->grow_kb[2] * per), s, sizeof(s));
	if (!strcmp(s, "0 B"))
		snprintf(s, sizeof(s), "0"); /* room for the interval at 80 columns */
	text_duration(st->interval_ns, iv, sizeof(iv));
	text_duration(st->cost_ns, cost, sizeof(cost));
	snprintf(left, sizeof(left), "anon %s/min  file %s/min  shmem %s/min  %u anon maps", a, f,
		 s, st->nanon);
	int lw = text_width(left);
	snprintf(right, sizeof(right), "smaps every %s (read %s)", iv, cost);
	if (lw + 2 + text_width(right) > g->w)
		snprintf(right, sizeof(right), "smaps every %s", iv);
	if (lw + 2 + text_width(right) > g->w)
		right[0] = '\0';
	grid_put(g, 0, y, left, GRID_BOLD, g->w);
	grid_put(g, g->w - text_width(right), y, right, GRID_DIM, -1);
}

/* "812", "9,999", "10.5k", "10.5M": a count in FAULTS_W columns. */
static void short_count(uint64_t n, char *out, size_t size)
{
	if (n < 10000)
		text_count(n, out, size);
	else if (n < 1000000)
		snprintf(out, size, "%.1fk", n / 1e3);
	else
		snprintf(out, size, "%.1fM", n / 1e6);
}

static void put_num(struct grid *g, int x, int y, int w, const char *s, uint16_t attr)
{
	int len = text_width(s);
	grid_put(g, x + (w > len ? w - len : 0), y, s, attr, w);
}

static int draw_maps(struct grid *g, int y, int nrows, const struct view_memory_state *st)
{
	char buf[LABEL_MAX * 2], n1[32], n2[32], n3[32];
	grid_fill(g, 0, y, g->w, L' ', HDR_ATTR);
	snprintf(buf, sizeof(buf), "%-*s%*s%*s%*s%*s  %s", KIND_W, "KIND", NUM_W, "RSS", NUM_W + 1,
		 "+WINDOW", NUM_W + 1, "PER MIN", MAPS_W, "MAPS", "MAPPING");
	grid_put(g, 0, y++, buf, HDR_ATTR, g->w);
	int namex = KIND_W + 3 * NUM_W + 2 + MAPS_W + 2;
	for (int i = 0; i < st->nmaps && i < nrows; i++, y++) {
		const struct view_memory_map *m = &st->maps[i];
		uint16_t attr = m->delta_kb > 0 ? GRID_BOLD : 0;
		grid_put(g, 0, y, m->kind, attr, KIND_W);
		text_bytes(m->rss_kb * 1024, n1, sizeof(n1));
		signed_bytes(m->delta_kb * 1024, n2, sizeof(n2));
		signed_bytes((int64_t)(m->per_min_kb * 1024), n3, sizeof(n3));
		put_num(g, KIND_W, y, NUM_W, n1, 0);
		put_num(g, KIND_W + NUM_W, y, NUM_W + 1, n2, attr);
		put_num(g, KIND_W + 2 * NUM_W + 1, y, NUM_W + 1, n3, attr);
		snprintf(n1, sizeof(n1), "%u", m->nmaps);
		put_num(g, KIND_W + 3 * NUM_W + 2, y, MAPS_W, n1, 0);
		char clean[LABEL_MAX];
		text_sanitize(m->name, clean, sizeof(clean));
		text_fit(clean, g->w - namex, buf, sizeof(buf));
		grid_put(g, namex, y, buf, 0, g->w - namex);
	}
	return y;
}

static void holders_title(const struct view_memory_state *st, char *buf, size_t size)
{
	char t[32];
	text_seconds(st->trace_s, t, sizeof(t));
	int n = snprintf(buf, size, "CODE PATHS holding it \xc2\xb7 traced %s", t);
	if (st->period > 1)
		n += snprintf(buf + n, size - (size_t)n, " \xc2\xb7 mmap sampled 1 in %u",
			      st->period);
	n += snprintf(buf + n, size - (size_t)n, " \xc2\xb7 faults 1/%u", st->fault_period);
	if (st->lost)
		snprintf(buf + n, size - (size_t)n, " \xc2\xb7 %llu records lost",
			 (unsigned long long)st->lost);
}

static void draw_holders(struct grid *g, int y, int nrows, const struct view_memory_state *st)
{
	char buf[LABEL_MAX * 2], n1[32], n2[32], n3[32];
	holders_title(st, buf, sizeof(buf));
	grid_put(g, 0, y++, buf, GRID_BOLD, g->w);
	grid_fill(g, 0, y, g->w, L' ', HDR_ATTR);
	snprintf(buf, sizeof(buf), "%*s%*s%*s%*s  %s", NUM_W, "HOLDS", NUM_W + 1, "+WINDOW",
		 NUM_W + 1, "PER MIN", FAULTS_W, "FAULTS", "CODE PATH");
	grid_put(g, 0, y++, buf, HDR_ATTR, g->w);
	int labx = 3 * NUM_W + 2 + FAULTS_W + 2;
	if (!st->nholders)
		grid_put(g, labx, y, "(no mmap or brk seen yet)", GRID_DIM, g->w - labx);
	for (int i = st->scroll; i < st->nholders && nrows > 0; i++, y++, nrows--) {
		const struct view_memory_holder *v = &st->holders[i];
		uint16_t attr = v->held_window ? GRID_BOLD : 0;
		text_bytes(v->held, n1, sizeof(n1));
		signed_bytes((int64_t)v->held_window, n2, sizeof(n2));
		signed_bytes((int64_t)v->per_min, n3, sizeof(n3));
		put_num(g, 0, y, NUM_W, n1, 0);
		put_num(g, NUM_W, y, NUM_W + 1, n2, attr);
		put_num(g, 2 * NUM_W + 1, y, NUM_W + 1, n3, attr);
		short_count(v->faults, n1, sizeof(n1));
		put_num(g, 3 * NUM_W + 2, y, FAULTS_W, n1, 0);
		char clean[LABEL_MAX];
		text_sanitize(v->label, clean, sizeof(clean));
		text_fit(clean, g->w - labx, buf, sizeof(buf));
		grid_put(g, labx, y, buf, attr, g->w - labx);
	}
}

int view_memory_render(struct grid *g, const struct view_header *h,
		       const struct view_memory_state *st)
{
	grid_clear(g);
	if (view_too_small(g))
		return 0;
	int y = view_header_render(g, 0, h);
	int last = g->h - 1; /* footer */
	if (st->heap[0])     /* the runtime's own view of its memory, first */
		grid_put(g, 0, y++, st->heap, st->heap_na ? GRID_DIM : GRID_BOLD, g->w);
	if (!h->batch)
		view_footer_render(g, st->utf8 ? footer : footer_ascii);
	else
		last = g->h;
	if (!st->started) {
		grid_put(g, 1, y + 1, "memory view: starting (smaps and mmap/brk tracing)",
			 GRID_DIM, -1);
		return 0;
	}
	if (st->smaps_err) {
		char msg[160];
		snprintf(msg, sizeof(msg), "cannot read /proc/%d/smaps: %s", h->pid,
			 strerror(-st->smaps_err));
		grid_put(g, 0, y++, msg, GRID_BOLD, g->w);
	}
	draw_split(g, y++, st);
	int avail = last - y - 3; /* two table headers, the tracing line */
	if (!st->tracing)
		avail += 1;
	int nmap = st->nmaps < avail / 2 ? st->nmaps : avail / 2;
	if (nmap < 3)
		nmap = st->nmaps < 3 ? st->nmaps : 3;
	y = draw_maps(g, y, nmap, st);
	if (!st->tracing) {
		char msg[320];
		snprintf(msg, sizeof(msg), "no code paths: %s",
			 st->trace_err[0] ? st->trace_err : "tracing not started");
		grid_put(g, 0, y, msg, GRID_DIM, g->w);
		return 0;
	}
	draw_holders(g, y, last - y - 2, st);
	return 0;
}
