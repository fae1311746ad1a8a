/*
 * view_icicle — draws the icicle of the window and handles its keys.
 *
 * Each update rebuilds the merged tree (icicle_build) from the live
 * window, resolves the selection and zoom PATHS against it, matches the
 * search and lays out the zoomed subtree (icicle_layout); render then
 * draws, from the const state:
 *
 *   header, breadcrumb (path to the zoom node; search / aged-out status at
 *   the right), one row per depth of "[label  ]" boxes ("[]" for two
 *   columns, "|" for a one-column thin bar), the detail line of the
 *   selection, and the footer with the keys and the colour legend.
 *
 * The rows scroll vertically just enough to keep the selection visible, so
 * deep stacks work at any height. Percentages are shares of the samples in
 * view (the window, narrowed to st->tid). Colours are foreground only (the
 * screen maps the palette); the selection is reverse+bold and search
 * matches bold+underline, so both read without colour too.
 *
 * Keys work on the tree of the last update (what is on screen); keys that
 * change what the tree is (f, t) and view_icicle_jump leave a function key
 * in priv->pending, which the next update turns into a selection on the new
 * tree. The search regex is compiled on the key that changes it. Nothing
 * here prints or allocates outside the state.
 */
#include "stacktop/lib/array.h"
#include "stacktop/ui/view_icicle.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/proc/funckind.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/ui/keymap.h"
#include "stacktop/ui/keys.h"
#include "stacktop/lib/text.h"

#define HOT_SELF 0.10 /* a frame with this share of self samples is drawn bold */
#define KEY_MAX 1024

struct view_icicle_priv {
	struct icicle *tree; /* of the last render */
	struct icicle_query q;
	struct icicle_box *boxes;
	size_t nboxes;
	uint32_t sel_node, zoom_node;
	int scroll;	  /* first icicle row shown (depth below the zoom node) */
	char pat[128];	  /* search over the cached tree: the pattern of the matches */
	bool have_pat;	  /* matches computed for pat on tree */
	char re_pat[128]; /* pattern re was compiled from (on the key) */
	bool re_set;	  /* re_pat holds a pattern */
	bool re_ok;	  /* re compiled from re_pat */
	bool substring;	  /* re_pat is not a valid regex: substring match */
	regex_t re;
	bool *match;	 /* per node */
	uint32_t *rank;	 /* per node: preorder position */
	uint32_t *mlist; /* matching nodes in preorder */
	size_t nm, cap;
	uint64_t mshare;       /* samples of stacks holding a match */
	char pending[KEY_MAX]; /* function key to select on the next update */
	/* the selection's frame at update (the detail's file:line), if have_sel_frame */
	struct frame sel_frame;
	bool have_sel_frame;
	bool more; /* rows deeper than the screen: the last row says so */
};

/* ---- colours by kind ---------------------------------------------------- */

/* KIND_WAIT colours what waits for work or for time (idle, sleep) and wall
 * mode's [sleep]/[idle]/[D-state]/[other] frames; their names say what they
 * are, so the legend lists the first KIND_LEGEND only. */
enum kind {
	KIND_APP,
	KIND_LIB,
	KIND_KERNEL,
	KIND_LOCK,
	KIND_IO,
	KIND_RUNTIME,
	KIND_GC,
	KIND_WAIT,
	KIND_PYTHON, /* a Python function (module: its .py file): app's colour, bold */
	KIND_N
};
#define KIND_LEGEND KIND_WAIT

static const struct {
	const char *label, *brief; /* legend, long and short */
	enum grid_color color;
} kinds[KIND_N] = {
    [KIND_APP] = {"app", "app", GRID_C_GREEN},
    [KIND_LIB] = {"lib", "lib", GRID_C_CYAN},
    [KIND_KERNEL] = {"kernel", "kern", GRID_C_MAGENTA},
    [KIND_LOCK] = {"lock", "lock", GRID_C_RED},
    [KIND_IO] = {"I/O", "I/O", GRID_C_BLUE},
    [KIND_RUNTIME] = {"runtime", "rt", GRID_C_YELLOW},
    /* its own colour, a bar that stands out: is the CPU the collector's? */
    [KIND_GC] = {"GC", "gc", GRID_C_GC},
    [KIND_WAIT] = {"sleep/wait", "wait", GRID_C_WHITE},
    [KIND_PYTHON] = {"python", "py", GRID_C_GREEN},
};

/* The colour of a function kind (funckind, the table every view asks);
 * KIND_N when the kind gives none. */
static enum kind kind_of_func(enum funckind k)
{
	switch (k) {
	case FUNCKIND_LOCK:
		return KIND_LOCK;
	case FUNCKIND_IO:
		return KIND_IO;
	case FUNCKIND_IDLE:
	case FUNCKIND_SLEEP:
		return KIND_WAIT;
	case FUNCKIND_GC:
		return KIND_GC;
	case FUNCKIND_RUNTIME:
		return KIND_RUNTIME;
	default:
		return KIND_N;
	}
}

/* Callers looked at for a futex or a syscall's entry (top-down only: in a
 * bottom-up tree the parent is the callee). */
#define KIND_UP_MAX 16

static enum kind kind_of(const struct icicle *t, uint32_t id)
{
	const struct icicle_node *n = &t->nodes[id];
	const char *m = n->module;
	enum funckind fk;
	enum kind k;

	/* Wall mode's pseudo frames: what an off-CPU thread waits in. */
	if (m && strcmp(m, "[wait]") == 0) {
		if (strcmp(n->name, "[lock]") == 0)
			return KIND_LOCK;
		if (strcmp(n->name, "[I/O]") == 0)
			return KIND_IO;
		return KIND_WAIT;
	}
	fk = funckind_of(n->name, n->kernel);
	if ((k = kind_of_func(fk)) != KIND_N)
		return k;
	/* A futex or a way into the kernel waits for what its caller does: a
	 * condition variable's futex is idle, a mutex's is lock. */
	for (uint32_t up = n->parent, i = 0;
	     fk == FUNCKIND_SYSCALL && !t->inverted && up != ICICLE_NONE && i < KIND_UP_MAX;
	     up = t->nodes[up].parent, i++) {
		enum funckind pk = funckind_of(t->nodes[up].name, t->nodes[up].kernel);

		if (pk != FUNCKIND_SYSCALL && pk != FUNCKIND_NONE) {
			if ((k = kind_of_func(pk)) == KIND_LOCK || k == KIND_IO || k == KIND_WAIT)
				return k;
			break;
		}
	}
	if (n->kernel)
		return KIND_KERNEL;
	if (m && strlen(m) > 3 && strcmp(m + strlen(m) - 3, ".py") == 0)
		return KIND_PYTHON; /* runtime/python's frames: a saved profile's too */
	if (!m || strstr(m, ".so") || m[0] == '[') /* [unknown], [vdso]; [jit] is app code */
		return m && strcmp(m, "[jit]") == 0 ? KIND_APP : KIND_LIB;
	return KIND_APP;
}

static uint16_t color_of(const struct view_icicle_state *st, const struct icicle *t, uint32_t id)
{
	static const enum grid_color pal[] = {GRID_C_RED,  GRID_C_GREEN,   GRID_C_YELLOW,
					      GRID_C_BLUE, GRID_C_MAGENTA, GRID_C_CYAN,
					      GRID_C_WHITE};
	const struct icicle_node *n = &t->nodes[id];
	uint32_t h = 2166136261u;
	const char *s;

	if (id == ICICLE_ROOT || (t->per_thread && n->depth == 1))
		return 0;
	if (st->diff_attr)
		return st->diff_attr(st->diff_ctx, t, id);
	if (!st->color_by_module) {
		enum kind k = kind_of(t, id);

		return GRID_COLOR(kinds[k].color) | (k == KIND_PYTHON ? GRID_BOLD : 0);
	}
	for (s = n->kernel ? "[kernel]" : n->module ? n->module : "?"; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return GRID_COLOR(pal[h % (sizeof(pal) / sizeof(pal[0]))]);
}

/* ---- text helpers --------------------------------------------------------- */

static const char *ellipsis(bool utf8)
{
	return utf8 ? "\xe2\x80\xa6" : "..";
}

/* "100%" only when it is all; never "100.0%" for less. */
static void fmt_pct(uint64_t part, uint64_t total, char *out, size_t size)
{
	double p = total ? 100.0 * (double)part / (double)total : 0;

	if (total && part >= total)
		snprintf(out, size, "100%%");
	else
		snprintf(out, size, "%.1f%%", p > 99.9 ? 99.9 : p);
}

/* Drop a trailing "(params)" (and " const") of a demangled C++ name. */
static void strip_params(char *s)
{
	size_t n = strlen(s);
	int depth = 0;

	if (n > 6 && strcmp(s + n - 6, " const") == 0)
		s[n -= 6] = 0;
	if (!n || s[n - 1] != ')')
		return;
	while (n-- > 0) {
		if (s[n] == ')')
			depth++;
		else if (s[n] == '(' && --depth == 0) {
			if (n > 0)
				s[n] = 0;
			return;
		}
	}
}

/* Fit a (raw) name into width columns, cutting from the LEFT so the
 * function's own name stays: "…::Parser::parse_row". */
static void fit_left(const char *raw, int width, bool utf8, char *out, size_t size)
{
	char buf[1024];
	const char *e = ellipsis(utf8), *p;
	int ew = utf8 ? 1 : 2, w, keep;
	uint32_t cp;
	int l;

	text_sanitize(raw, buf, sizeof(buf));
	if (text_width(buf) > width)
		strip_params(buf);
	w = text_width(buf);
	if (w <= width || width <= ew) {
		/* no room for an ellipsis: the first letters say more than the last */
		for (p = buf, keep = 0; *p; p += l) {
			l = text_utf8_decode(p, &cp);
			if (l <= 0)
				l = 1;
			if (keep + text_cp_width(cp) > width)
				break;
			keep += text_cp_width(cp);
		}
		snprintf(out, size, "%.*s", (int)(p - buf), buf);
		return;
	}
	keep = width - ew;
	/* skip code points from the start until the rest fits in keep */
	for (p = buf; *p && w > keep; p += l) {
		l = text_utf8_decode(p, &cp);
		if (l <= 0)
			l = 1;
		w -= text_cp_width(cp);
	}
	snprintf(out, size, "%s%s", e, p);
}

/* ---- search ---------------------------------------------------------------- */

static void search_reset(struct view_icicle_priv *p)
{
	p->have_pat = false;
	p->nm = 0;
	p->mshare = 0;
}

/* Compile pat (once per pattern; on the key that changes it, not in
 * draw); an invalid regex becomes a substring search. */
static void search_compile(struct view_icicle_priv *p, const char *pat)
{
	if (p->re_set && strcmp(pat, p->re_pat) == 0)
		return;
	if (p->re_ok)
		regfree(&p->re);
	snprintf(p->re_pat, sizeof(p->re_pat), "%s", pat);
	p->re_set = true;
	p->re_ok = pat[0] && regcomp(&p->re, pat, REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0;
	p->substring = pat[0] && !p->re_ok;
}

static bool name_matches(struct view_icicle_priv *p, const char *name)
{
	if (p->re_ok)
		return regexec(&p->re, name, 0, NULL, 0) == 0;
	return strcasestr(name, p->re_pat) != NULL;
}

static int match_reserve(struct view_icicle_priv *p, size_t n)
{
	void *r;

	if (n <= p->cap)
		return 0;
	if (!(r = realloc(p->match, n * sizeof(*p->match))))
		return -ENOMEM;
	p->match = r;
	if (!(r = realloc(p->rank, n * sizeof(*p->rank))))
		return -ENOMEM;
	p->rank = r;
	if (!(r = realloc(p->mlist, n * sizeof(*p->mlist))))
		return -ENOMEM;
	p->mlist = r;
	p->cap = n;
	return 0;
}

/* Next node in preorder (children heaviest first), ICICLE_NONE at the end. */
static uint32_t preorder_next(const struct icicle *t, uint32_t n)
{
	if (t->nodes[n].first_child != ICICLE_NONE)
		return t->nodes[n].first_child;
	while (n != ICICLE_ROOT && t->nodes[n].next_sibling == ICICLE_NONE)
		n = t->nodes[n].parent;
	return n == ICICLE_ROOT ? ICICLE_NONE : t->nodes[n].next_sibling;
}

static bool is_thread_node(const struct icicle *t, uint32_t n)
{
	return t->per_thread && t->nodes[n].depth == 1;
}

/* Matches of pat on the cached tree: per node, in preorder, and the
 * samples of stacks holding any match (each stack once: the topmost
 * matching node of a path carries all of them). */
static int search_update(struct view_icicle_priv *p, const char *pat)
{
	const struct icicle *t = p->tree;
	uint32_t n, a, r = 0;

	if (p->have_pat && strcmp(pat, p->pat) == 0)
		return 0;
	search_reset(p);
	snprintf(p->pat, sizeof(p->pat), "%s", pat);
	if (!t || match_reserve(p, t->n))
		return t ? -ENOMEM : 0;
	p->have_pat = true;
	search_compile(p, pat);
	if (!pat[0])
		return 0;
	for (n = ICICLE_ROOT; n != ICICLE_NONE; n = preorder_next(t, n)) {
		p->rank[n] = r++;
		p->match[n] =
		    n != ICICLE_ROOT && !is_thread_node(t, n) && name_matches(p, t->nodes[n].name);
		if (!p->match[n])
			continue;
		p->mlist[p->nm++] = n;
		for (a = t->nodes[n].parent; a != ICICLE_ROOT && !p->match[a];)
			a = t->nodes[a].parent;
		if (a == ICICLE_ROOT)
			p->mshare += t->nodes[n].total;
	}
	return 0;
}

/* ---- state -------------------------------------------------------------- */

static struct view_icicle_priv *priv_of(struct view_icicle_state *st)
{
	if (!st->priv && (st->priv = calloc(1, sizeof(*st->priv)))) {
		st->priv->sel_node = ICICLE_ROOT;
		st->priv->zoom_node = ICICLE_ROOT;
	}
	return st->priv;
}

void view_icicle_state_free(struct view_icicle_state *st)
{
	struct view_icicle_priv *p = st->priv;

	icicle_path_free(&st->sel);
	icicle_path_free(&st->zoom);
	if (!p)
		return;
	search_reset(p);
	if (p->re_ok)
		regfree(&p->re);
	icicle_free(p->tree);
	ARRAY_FREE_ALL(p->boxes, p->match, p->rank, p->mlist, p);
	st->priv = NULL;
}

static void set_sel(struct view_icicle_state *st, uint32_t node)
{
	struct view_icicle_priv *p = st->priv;

	p->sel_node = node;
	icicle_path_of(p->tree, node, &st->sel);
	st->aged_out = false;
}

static void set_zoom(struct view_icicle_state *st, uint32_t node)
{
	struct view_icicle_priv *p = st->priv;

	p->zoom_node = node;
	icicle_path_of(p->tree, node, &st->zoom);
}

/* The heaviest node whose function key is key (ties: the shallowest). */
static uint32_t find_by_key(const struct icicle *t, const char *key)
{
	uint32_t best = ICICLE_NONE, i;
	char buf[KEY_MAX];

	for (i = 1; i < t->n; i++) {
		const struct icicle_node *n = &t->nodes[i];

		if (best != ICICLE_NONE &&
		    (n->total < t->nodes[best].total ||
		     (n->total == t->nodes[best].total && n->depth >= t->nodes[best].depth)))
			continue;
		icicle_node_key(t, i, buf, sizeof(buf));
		if (strcmp(buf, key) == 0)
			best = i;
	}
	return best;
}

/* The frame id a (possibly kept, paused) tree node holds still names that
 * node: ids of stacks that aged out are freed and may be given to others. */
static bool frame_still_names(struct window *w, const struct icicle *t, uint32_t node)
{
	char a[KEY_MAX], b[KEY_MAX];
	uint32_t id = t->nodes[node].frame;

	if (id == ICICLE_NONE || !icicle_frame_key(w, id, a, sizeof(a)))
		return false;
	icicle_node_key(t, node, b, sizeof(b));
	return strcmp(a, b) == 0;
}

/* Build (or, while paused with the same query, keep) the tree, then map
 * the paths onto it. */
static int refresh_tree(struct view_icicle_state *st, struct window *w, bool paused)
{
	struct view_icicle_priv *p = st->priv;
	struct icicle_query q = {.tid = st->tid,
				 .pid = st->pid,
				 .hide_kernel = st->hide_kernel,
				 .inverted = st->inverted,
				 .per_thread_roots = st->per_thread,
				 .fold_recursion = !st->unfold_recursion,
				 .thread_label = st->thread_label,
				 .label_ctx = st->label_ctx};
	struct icicle *t;
	size_t zm, sm;
	int err;

	if (!p->tree || !paused || q.tid != p->q.tid || q.pid != p->q.pid ||
	    q.hide_kernel != p->q.hide_kernel || q.inverted != p->q.inverted ||
	    q.per_thread_roots != p->q.per_thread_roots ||
	    q.fold_recursion != p->q.fold_recursion) {
		if ((err = icicle_build(w, &q, &t)))
			return err;
		icicle_free(p->tree);
		p->tree = t;
		p->q = q;
		p->have_pat = false; /* matches were for the old tree */
	}
	t = p->tree;
	if (p->pending[0]) {
		uint32_t n = find_by_key(t, p->pending);

		p->pending[0] = 0;
		icicle_path_free(&st->zoom);
		icicle_path_of(t, n == ICICLE_NONE ? ICICLE_ROOT : n, &st->sel);
	}
	p->zoom_node = icicle_path_resolve(t, &st->zoom, &zm);
	p->sel_node = icicle_path_resolve(t, &st->sel, &sm);
	st->aged_out = sm < st->sel.n || zm < st->zoom.n;
	if (!icicle_is_ancestor(t, p->zoom_node, p->sel_node))
		p->sel_node = p->zoom_node;
	return 0;
}

/* ---- drawing ---------------------------------------------------------------- */

static void draw_box(struct grid *g, int y, const struct icicle_box *b, const struct icicle *t,
		     const struct view_icicle_state *st, uint16_t attr)
{
	const struct icicle_node *n = &t->nodes[b->node];
	int w = b->x1 - b->x0, iw = w - 2;
	char name[1024], pct[16], label[1100], rec[16] = "", shortn[1024];

	if (w == 1) {
		grid_fill(g, b->x0, y, 1, L'|', attr);
		return;
	}
	grid_fill(g, b->x0, y, w, L' ', attr);
	grid_put(g, b->x0, y, "[", attr, 1);
	grid_put(g, b->x1 - 1, y, "]", attr, 1);
	if (iw <= 0)
		return;
	fmt_pct(n->total, t->nodes[ICICLE_ROOT].total, pct, sizeof(pct));
	const char *shown = view_func_name(n->name, st->full_names, shortn, sizeof(shortn));
	text_sanitize(shown, name, sizeof(name));
	if (n->rec) {
		/* Folded recursion: the calls it stands for, after the name,
		 * kept when the name is cut. */
		snprintf(rec, sizeof(rec), st->utf8 ? " \xc3\x97%u" : " x%u", n->rec + 1);
		if (text_width(rec) >= iw)
			rec[0] = 0;
	}
	if (text_width(name) + text_width(rec) + 1 + (int)strlen(pct) <= iw) {
		snprintf(label, sizeof(label), "%s%s %s", name, rec, pct);
	} else {
		fit_left(shown, iw - text_width(rec), st->utf8, label, sizeof(label) - sizeof(rec));
		strcat(label, rec);
	}
	grid_put(g, b->x0 + 1, y, label, attr, iw);
}

static uint16_t box_attr(const struct view_icicle_state *st, const struct view_icicle_priv *p,
			 uint32_t id)
{
	const struct icicle *t = p->tree;
	uint64_t all = t->nodes[ICICLE_ROOT].total;
	uint16_t a = color_of(st, t, id);

	if (all && (double)t->nodes[id].self >= HOT_SELF * (double)all)
		a |= GRID_BOLD;
	if (p->nm) {
		if (p->match[id])
			a |= GRID_BOLD | GRID_UNDERLINE;
		else
			a |= GRID_DIM;
	}
	if (id == p->sel_node)
		a = (uint16_t)((a & ~GRID_DIM) | GRID_REVERSE | GRID_BOLD);
	return a;
}

/* Breadcrumb: right part (status, search) first, the path gets the rest,
 * cut after "all" with an ellipsis when too long. */
static void draw_breadcrumb(struct grid *g, int y, const struct view_icicle_state *st,
			    const struct view_icicle_priv *p)
{
	const struct icicle *t = p->tree;
	char right[512], srch[300], item[128], pct[16], pat[160], cnt[32];
	char *items[64], path[2048];
	uint32_t chain[64], n;
	int nc = 0, i, rw, avail, first;
	size_t o;

	right[0] = 0;
	if (st->aged_out)
		snprintf(right, sizeof(right), "! selected path aged out of the window");
	if (st->editing_search || st->search[0]) {
		const char *cur = st->utf8 ? "\xe2\x96\x88" : "_"; /* the typing cursor */

		text_sanitize(st->editing_search ? st->edit : st->search, pat, sizeof(pat));
		text_count(p->nm, cnt, sizeof(cnt));
		fmt_pct(p->mshare, t->nodes[ICICLE_ROOT].total, pct, sizeof(pct));
		if (p->nm)
			snprintf(srch, sizeof(srch), "search: %s%s  %s match%s %s%s", pat,
				 st->editing_search ? cur : "", cnt, p->nm == 1 ? "" : "es", pct,
				 p->substring ? " (substring)" : "");
		else
			snprintf(srch, sizeof(srch), "search: %s%s  no match", pat,
				 st->editing_search ? cur : "");
		o = strlen(right);
		snprintf(right + o, sizeof(right) - o, "%s%s", o ? "  " : "", srch);
	}
	rw = text_width(right);
	if (rw > g->w - 20) {
		text_fit(right, g->w - 20, srch, sizeof(srch));
		snprintf(right, sizeof(right), "%s", srch);
		rw = text_width(right);
	}
	if (rw) {
		grid_put(g, g->w - rw, y, right, GRID_BOLD, rw);
		if (st->aged_out)
			grid_attr(g, g->w - rw, y, 38, GRID_BOLD | GRID_COLOR(GRID_C_YELLOW));
	}
	avail = g->w - (rw ? rw + 2 : 0);

	/* the chain root..zoom, keeping the root and the last 63 */
	for (n = p->zoom_node; n != ICICLE_NONE; n = t->nodes[n].parent) {
		if (nc == 64)
			memmove(chain + 1, chain + 2, sizeof(chain[0]) * 62), nc = 63;
		chain[nc++] = n;
	}
	for (i = 0; i < nc; i++) {
		char name[96], sn[1024];

		fit_left(view_func_name(t->nodes[chain[nc - 1 - i]].name, st->full_names, sn,
					sizeof(sn)),
			 40, st->utf8, name, sizeof(name));
		fmt_pct(t->nodes[chain[nc - 1 - i]].total, t->nodes[ICICLE_ROOT].total, pct,
			sizeof(pct));
		snprintf(item, sizeof(item), "%s%s %s", i == 0 && t->inverted ? "bottom-up: " : "",
			 name, pct);
		items[i] = strdup(item);
	}
	/* drop items after the root until the path fits */
	for (first = 1;; first++) {
		o = 0;
		path[0] = 0;
		for (i = 0; i < nc; i++) {
			if (i > 0 && i < first)
				continue;
			if (i == first && first > 1)
				o += (size_t)snprintf(path + o, sizeof(path) - o, "  >  %s",
						      ellipsis(st->utf8));
			o += (size_t)snprintf(path + o, sizeof(path) - o, "%s%s", i ? "  >  " : "",
					      items[i] ? items[i] : "?");
			if (o >= sizeof(path))
				o = sizeof(path) - 1;
		}
		if (text_width(path) <= avail || first >= nc - 1)
			break;
	}
	for (i = 0; i < nc; i++)
		free(items[i]);
	text_fit(path, avail, srch, sizeof(srch));
	grid_put(g, 0, y, srch, 0, avail);
}

static void draw_detail(struct grid *g, int y, const struct view_icicle_state *st,
			const struct view_icicle_priv *p)
{
	const struct icicle *t = p->tree;
	const struct icicle_node *n = &t->nodes[p->sel_node];
	uint64_t all = t->nodes[ICICLE_ROOT].total;
	char line[1600], out[1600], name[512], tmp[256], loc[300], mod[300], sp[16], tp[16];
	char sc[32], tc[32], amd[64];
	const char *file;
	double share;
	int lvl;

	text_sanitize(n->name, name, sizeof(name));
	loc[0] = mod[0] = 0;
	if (p->have_sel_frame) {
		const struct frame *f = &p->sel_frame;

		if (f->has_line && f->sym.file) {
			file =
			    strrchr(f->sym.file, '/') ? strrchr(f->sym.file, '/') + 1 : f->sym.file;
			text_sanitize(file, tmp, sizeof(tmp));
			if (f->sym.line > 0)
				snprintf(loc, sizeof(loc), "  %s:%d", tmp, f->sym.line);
			else
				snprintf(loc, sizeof(loc), "  %s", tmp);
		}
	}
	if (n->module) {
		text_sanitize(n->module, tmp, sizeof(tmp));
		snprintf(mod, sizeof(mod), "  module %s", tmp);
	}
	fmt_pct(n->self, all, sp, sizeof(sp));
	fmt_pct(n->total, all, tp, sizeof(tp));
	text_count(n->self, sc, sizeof(sc));
	text_count(n->total, tc, sizeof(tc));
	share = all ? (double)n->total / (double)all : 0;
	if (all && n->total >= all)
		snprintf(amd, sizeof(amd), "if free: %s (whole profile)",
			 st->utf8 ? "\xe2\x88\x9e" : "inf");
	else
		snprintf(amd, sizeof(amd), "if free: %.2fx faster", 1.0 / (1.0 - share));
	/* Narrow screens lose the sample counts, then the module, then the
	 * location, before anything is cut. */
	for (lvl = 0; lvl < 4; lvl++) {
		char cs[48] = "", ct[48] = "";

		if (lvl < 1) {
			snprintf(cs, sizeof(cs), " (%s sample%s)", sc, n->self == 1 ? "" : "s");
			snprintf(ct, sizeof(ct), " (%s sample%s)", tc, n->total == 1 ? "" : "s");
		}
		snprintf(line, sizeof(line), "selected: %s%s%s  self %s%s  total %s%s  %s", name,
			 lvl < 3 ? loc : "", lvl < 2 ? mod : "", sp, cs, tp, ct, amd);
		if (text_width(line) <= g->w)
			break;
	}
	if (lvl == 4) {
		/* Still too wide: cut the name, not the numbers after it. */
		int rest;

		snprintf(line, sizeof(line), "  self %s  total %s  %s", sp, tp, amd);
		rest = text_width(line);
		if (g->w - 10 - rest >= 8) {
			text_fit(name, g->w - 10 - rest, tmp, sizeof(tmp));
			snprintf(line, sizeof(line), "selected: %s  self %s  total %s  %s", tmp, sp,
				 tp, amd);
		} else {
			snprintf(line, sizeof(line), "selected: %s  self %s  total %s  %s", name,
				 sp, tp, amd);
		}
	}
	text_fit(line, g->w, out, sizeof(out));
	grid_put(g, 0, y, out, 0, g->w);
	grid_attr(g, 0, y, 9, GRID_BOLD);
}

/* Append whole hints items[from..to) to hints while they fit in avail. */
static size_t add_hints(char *hints, size_t size, size_t o, const char *const *items, size_t from,
			size_t to, int avail)
{
	for (; from < to; from++) {
		if (text_width(hints) + 2 + text_width(items[from]) > avail)
			break;
		o += (size_t)snprintf(hints + o, size - o, " %s%s", o ? " " : "", items[from]);
	}
	return o;
}

static int legend_text(const struct view_icicle_state *st, bool brief, char *out, size_t size)
{
	size_t o;
	int i;

	if (st->diff_attr) {
		snprintf(out, size,
			 brief ? " diff: grew shrank n.s. "
			       : " diff: grew shrank not-significant ");
	} else if (st->color_by_module) {
		snprintf(out, size, " colour: by module ");
	} else {
		out[0] = 0;
		for (i = 0; i < KIND_LEGEND; i++) {
			o = strlen(out);
			snprintf(out + o, size - o, " %s", brief ? kinds[i].brief : kinds[i].label);
		}
		o = strlen(out);
		snprintf(out + o, size - o, " ");
	}
	return text_width(out);
}

/* Keys first (the seven that drive this view), then the colour legend
 * (long, else short) if it fits, then the general keys in what is left. */
static void draw_footer(struct grid *g, const struct view_icicle_state *st)
{
	const char *const items[] = {
	    st->utf8 ? "\xe2\x86\x90\xe2\x86\x91\xe2\x86\x93\xe2\x86\x92" : "arrows",
	    "Enter zoom",
	    "Esc back",
	    "/ search",
	    "n/N match",
	    st->inverted ? "f top-down" : "f bottom-up",
	    "c colour",
	    "t threads",
	    "? help",
	    "q quit",
	};
	const size_t nitems = sizeof(items) / sizeof(items[0]), nkey = 7;
	char hints[300], legend[128];
	int y = g->h - 1, lw, x, i, avail, hw;
	bool brief = false;
	size_t o;

	hints[0] = 0;
	o = add_hints(hints, sizeof(hints), 0, items, 0, nkey, g->w);
	hw = text_width(hints);
	lw = legend_text(st, false, legend, sizeof(legend));
	if (hw + 1 + lw > g->w) {
		brief = true;
		lw = legend_text(st, true, legend, sizeof(legend));
	}
	if (hw + 1 + lw > g->w)
		lw = 0; /* no room: the keys matter more */
	avail = lw ? g->w - lw - 1 : g->w;
	add_hints(hints, sizeof(hints), o, items, nkey, nitems, avail);
	view_footer_render(g, hints);
	if (!lw)
		return;
	x = g->w - lw;
	grid_put(g, x, y, legend, GRID_BOLD, lw);
	if (st->diff_attr) {
		x += 7; /* " diff: " */
		grid_attr(g, x, y, 4, GRID_BOLD | GRID_COLOR(GRID_C_RED));
		grid_attr(g, x + 5, y, 6, GRID_BOLD | GRID_COLOR(GRID_C_BLUE));
		grid_attr(g, x + 12, y, brief ? 4 : 15, GRID_DIM);
		return;
	}
	if (st->color_by_module)
		return;
	for (i = 0, x++; i < KIND_LEGEND; i++) {
		const char *l = brief ? kinds[i].brief : kinds[i].label;

		grid_attr(g, x, y, text_width(l), GRID_BOLD | GRID_COLOR(kinds[i].color));
		x += text_width(l) + 1;
	}
}

/* The boxes of rows scroll .. scroll + nr: one row more than shows, so
 * update tells "more below" from it. */
static int lay_out(struct view_icicle_priv *p, int cols, int nr)
{
	free(p->boxes);
	p->boxes = NULL;
	p->nboxes = 0;
	return icicle_layout(p->tree, p->zoom_node, cols, p->scroll + nr + 1, &p->boxes,
			     &p->nboxes);
}

int view_icicle_update(struct view_icicle_state *st, const struct view_header *h, struct window *w,
		       int cols, int rows)
{
	struct view_icicle_priv *p;
	const struct icicle *t;
	int top, bottom, nr, rd, err;

	st->selected_frame = UINT32_MAX;
	st->nmatches = 0;
	st->match_share = 0;
	if (cols < VIEW_MIN_W || rows < VIEW_MIN_H)
		return 0;
	if (!(p = priv_of(st)))
		return -ENOMEM;
	if ((err = refresh_tree(st, w, h && h->paused)))
		return err;
	t = p->tree;
	if ((err = search_update(p, st->editing_search ? st->edit : st->search)))
		return err;
	st->nmatches = (int)p->nm;
	st->match_share = t->nodes[ICICLE_ROOT].total
			      ? (double)p->mshare / (double)t->nodes[ICICLE_ROOT].total
			      : 0;
	if (p->sel_node != ICICLE_ROOT)
		st->selected_frame = t->nodes[p->sel_node].frame;
	p->have_sel_frame = false;
	if (frame_still_names(w, t, p->sel_node)) {
		/* The one frame whose file:line the details line shows. */
		p->sel_frame = *frames_line(window_frames_mut(w), t->nodes[p->sel_node].frame);
		p->have_sel_frame = true;
	}

	top = view_header_height(h) + 1;
	bottom = rows - 2; /* detail line */
	nr = bottom - top;
	rd = (int)(t->nodes[p->sel_node].depth - t->nodes[p->zoom_node].depth);
	p->scroll = rd >= nr ? rd - nr + 1 : 0;
	if ((err = lay_out(p, cols, nr)))
		return err;
	/* Deeper than the rows: the last row is "more below"'s own, so it
	 * hides no bar (it was drawn over the leaf row), and the selection
	 * stays above it. */
	p->more = false;
	for (size_t i = 0; i < p->nboxes; i++)
		p->more = p->more || p->boxes[i].row >= p->scroll + nr;
	if (p->more && nr > 1) {
		p->scroll = rd >= nr - 1 ? rd - nr + 2 : 0;
		return lay_out(p, cols, nr);
	}
	return 0;
}

int view_icicle_render(struct grid *g, const struct view_header *h,
		       const struct view_icicle_state *st)
{
	const struct view_icicle_priv *p = st->priv;
	const struct icicle *t;
	int y, top, bottom, nr;
	size_t i;

	grid_clear(g);
	if (view_too_small(g))
		return 0;
	y = h ? view_header_render(g, 0, h) : 0;
	top = y + 1;
	bottom = g->h - 2; /* detail line */
	nr = bottom - top;
	if (!p || !p->tree) { /* no update yet */
		view_put_centered(g, top + nr / 2, "waiting for samples\xe2\x80\xa6", GRID_DIM);
		draw_footer(g, st);
		return 0;
	}
	t = p->tree;
	draw_breadcrumb(g, y, st, p);
	if (!t->nodes[ICICLE_ROOT].total)
		view_put_centered(g, top + nr / 2, "waiting for samples\xe2\x80\xa6", GRID_DIM);
	int last = -1;
	/* Deeper frames than the screen has rows: the last row says so, on
	 * its own (update kept the selection above it). */
	bool more = p->more && bottom - 1 > top;
	int end = more ? bottom - 1 : bottom;
	for (i = 0; i < p->nboxes; i++) {
		const struct icicle_box *b = &p->boxes[i];
		int by = top + b->row - p->scroll;

		if (b->row < p->scroll || by >= end)
			continue;
		draw_box(g, by, b, t, st, box_attr(st, p, b->node));
		if (by > last)
			last = by;
	}
	if (more) {
		const char *mark = st->utf8 ? " \xe2\x96\xbc more below " : " v more below ";
		int mw = text_width(mark);
		grid_put(g, g->w - mw, end, mark, GRID_BOLD | GRID_REVERSE, mw);
	}
	/* Batch text has no keys: no footer, and the detail line follows the
	 * deepest row instead of the bottom of an imaginary screen. */
	if (h && h->batch) {
		draw_detail(g, last >= top && last + 1 < bottom ? last + 1 : bottom, st, p);
		return 0;
	}
	draw_detail(g, bottom, st, p);
	draw_footer(g, st);
	return 0;
}

/* ---- keys --------------------------------------------------------------------- */

/* Index of the selection's box in the last layout, or -1. */
static long sel_box(const struct view_icicle_priv *p)
{
	size_t i;

	for (i = 0; i < p->nboxes; i++)
		if (p->boxes[i].node == p->sel_node)
			return (long)i;
	return -1;
}

static void move_side(struct view_icicle_state *st, int dir)
{
	struct view_icicle_priv *p = st->priv;
	const struct icicle *t = p->tree;
	long b = sel_box(p), nb = b + dir;
	uint32_t c, prev = ICICLE_NONE;

	if (b >= 0) {
		if (nb >= 0 && nb < (long)p->nboxes && p->boxes[nb].row == p->boxes[b].row)
			set_sel(st, p->boxes[nb].node);
		return;
	}
	if (p->sel_node == p->zoom_node)
		return;
	/* not on screen: plain siblings */
	for (c = t->nodes[t->nodes[p->sel_node].parent].first_child; c != ICICLE_NONE;
	     prev = c, c = t->nodes[c].next_sibling) {
		if (c != p->sel_node)
			continue;
		if (dir < 0 && prev != ICICLE_NONE)
			set_sel(st, prev);
		else if (dir > 0 && t->nodes[c].next_sibling != ICICLE_NONE)
			set_sel(st, t->nodes[c].next_sibling);
		return;
	}
}

/* Select match k of the list, zooming out to the root when it is outside
 * the zoomed subtree. */
static void goto_match(struct view_icicle_state *st, size_t k)
{
	struct view_icicle_priv *p = st->priv;
	uint32_t m = p->mlist[k];

	if (!icicle_is_ancestor(p->tree, p->zoom_node, m))
		set_zoom(st, ICICLE_ROOT);
	set_sel(st, m);
}

static void next_match(struct view_icicle_state *st, int dir)
{
	struct view_icicle_priv *p = st->priv;
	uint32_t r = p->rank[p->sel_node];
	size_t k;

	if (!p->nm)
		return;
	if (dir > 0) {
		for (k = 0; k < p->nm && p->rank[p->mlist[k]] <= r; k++)
			;
		goto_match(st, k < p->nm ? k : 0);
	} else {
		for (k = p->nm; k > 0 && p->rank[p->mlist[k - 1]] >= r; k--)
			;
		goto_match(st, k > 0 ? k - 1 : p->nm - 1);
	}
}

/* Enter after '/': accept, then select the first match inside the zoomed
 * subtree, or the first one anywhere. */
static void accept_search(struct view_icicle_state *st)
{
	struct view_icicle_priv *p = st->priv;
	size_t k;

	snprintf(st->search, sizeof(st->search), "%s", st->edit);
	st->editing_search = false;
	if (!p->tree || search_update(p, st->search) || !p->nm)
		return;
	for (k = 0; k < p->nm; k++)
		if (icicle_is_ancestor(p->tree, p->zoom_node, p->mlist[k]))
			break;
	goto_match(st, k < p->nm ? k : 0);
}

static void edit_key(struct view_icicle_state *st, int key)
{
	size_t n = strlen(st->edit);

	switch (key) {
	case KEYS_ENTER:
		accept_search(st);
		break;
	case KEYS_ESC:
		st->editing_search = false;
		st->edit[0] = 0;
		break;
	case KEYS_BACKSPACE:
		while (n > 0 && ((unsigned char)st->edit[n - 1] & 0xc0) == 0x80)
			n--; /* a whole UTF-8 sequence */
		if (n > 0)
			n--;
		st->edit[n] = 0;
		break;
	default:
		if (key >= 0x20 && key <= 0xff && key != 0x7f && n + 1 < sizeof(st->edit)) {
			st->edit[n] = (char)key;
			st->edit[n + 1] = 0;
		}
		break;
	}
	/* The live search: compiled here, on the key, and matched on the
	 * current tree; update matches it again on each new tree. */
	if (st->editing_search && st->priv->tree)
		search_update(st->priv, st->edit);
}

/* f and t change what the tree is: keep the selected function. */
static void rebuild_keeping(struct view_icicle_state *st)
{
	struct view_icicle_priv *p = st->priv;

	p->pending[0] = 0;
	if (p->tree && p->sel_node != ICICLE_ROOT && !is_thread_node(p->tree, p->sel_node))
		icicle_node_key(p->tree, p->sel_node, p->pending, sizeof(p->pending));
	icicle_path_free(&st->sel);
	icicle_path_free(&st->zoom);
	p->sel_node = p->zoom_node = ICICLE_ROOT;
	st->aged_out = false;
}

/* The keys' functions: ctx is the state; the tree may be missing. */
static struct view_action ic_search(void *ctx, int key)
{
	struct view_icicle_state *st = ctx;

	(void)key;
	st->editing_search = true;
	st->edit[0] = 0;
	if (st->priv->tree)
		search_update(st->priv, st->edit);
	return keymap_used(true);
}

/* c colour, f bottom-up, t a root per thread, x recursion unfolded (or C F T
 * X, their aliases) */
static struct view_action ic_toggle(void *ctx, int key)
{
	struct view_icicle_state *st = ctx;
	bool *flag = (key | 0x20) == 'c'   ? &st->color_by_module
		     : (key | 0x20) == 'f' ? &st->inverted
		     : (key | 0x20) == 'x' ? &st->unfold_recursion
					   : &st->per_thread;
	*flag = !*flag;
	/* f and t change what the tree is; x only how deep a path runs, so
	 * the selected path resolves as far as it still goes. */
	if ((key | 0x20) == 'f' || (key | 0x20) == 't')
		rebuild_keeping(st);
	return keymap_used(true);
}

static struct view_action ic_move(void *ctx, int key)
{
	struct view_icicle_state *st = ctx;
	struct view_icicle_priv *p = st->priv;
	const struct icicle *t = p->tree;
	uint32_t c;

	if (t && key == KEYS_UP && p->sel_node != ICICLE_ROOT) {
		c = t->nodes[p->sel_node].parent;
		if (p->sel_node == p->zoom_node)
			set_zoom(st, c);
		set_sel(st, c);
	} else if (t && key == KEYS_DOWN &&
		   (c = t->nodes[p->sel_node].first_child) != ICICLE_NONE) {
		set_sel(st, c);
	} else if (t && (key == KEYS_LEFT || key == KEYS_RIGHT)) {
		move_side(st, key == KEYS_LEFT ? -1 : 1);
	}
	return keymap_used(true);
}

/* Enter: zoom in; Esc, Backspace: out one level, and at the root Esc
 * clears the search (else the key is not used). */
static struct view_action ic_zoom(void *ctx, int key)
{
	struct view_icicle_state *st = ctx;
	struct view_icicle_priv *p = st->priv;

	if (key == KEYS_ENTER && p->tree)
		set_zoom(st, p->sel_node);
	else if (key != KEYS_ENTER && p->tree && p->zoom_node != ICICLE_ROOT)
		set_zoom(st, p->tree->nodes[p->zoom_node].parent);
	else if (key == KEYS_ESC && st->search[0])
		st->search[0] = 0;
	else
		return keymap_used(key == KEYS_ENTER);
	return keymap_used(true);
}

static struct view_action ic_next(void *ctx, int key)
{
	struct view_icicle_state *st = ctx;

	if (st->priv->tree && st->search[0] && search_update(st->priv, st->search) == 0)
		next_match(st, key == 'n' ? 1 : -1);
	return keymap_used(true);
}

static struct view_action ic_annotate(void *ctx, int key)
{
	(void)key;
	return (struct view_action){VIEW_ACTION_ANNOTATE,
				    .frame = ((struct view_icicle_state *)ctx)->selected_frame};
}

static const struct keymap_entry icicle_keys[] = {
    {{KEYS_UP, KEYS_DOWN, KEYS_LEFT, KEYS_RIGHT}, 0, ic_move, NULL, "caller, callee, siblings", 0},
    {{KEYS_ENTER}, 0, ic_zoom, NULL, "zoom in; zoom out", 0},
    {{KEYS_ESC, KEYS_BACKSPACE}, 0, ic_zoom, "Esc", NULL, 0},
    {{'/'}, 0, ic_search, NULL, "search; next/prev match", 0},
    {{'n'}, 0, ic_next, NULL, NULL, 0},
    {{'N'}, 0, ic_next, NULL, NULL, 0},
    {{'f'}, 'F', ic_toggle, NULL, "bottom-up; colour; threads", 0},
    {{'c'}, 'C', ic_toggle, NULL, NULL, 0},
    {{'t'}, 'T', ic_toggle, NULL, NULL, 0},
    {{'x'}, 'X', ic_toggle, NULL, "fold / unfold recursion", 0},
    {{'a'}, 0, ic_annotate, NULL, "annotate it", KEYMAP_QUIET}, /* the top view's line */
};

const struct keymap view_icicle_keymap = {"Icicle view", icicle_keys,
					  sizeof(icicle_keys) / sizeof(icicle_keys[0]), true};

struct view_action view_icicle_key(struct view_icicle_state *st, int key)
{
	if (!priv_of(st))
		return keymap_used(false);
	if (st->editing_search) { /* typing: every key is text */
		edit_key(st, key);
		return keymap_used(true);
	}
	return keymap_act(&view_icicle_keymap, st, key);
}

void view_icicle_jump(struct view_icicle_state *st, struct window *w, uint32_t frame)
{
	const struct frame *f = frames_get(window_frames(w), frame);
	if (f)
		view_icicle_jump_to(st, w, f);
}

void view_icicle_jump_to(struct view_icicle_state *st, struct window *w, const struct frame *f)
{
	struct icicle_query q = {.tid = st->tid, .pid = st->pid, .hide_kernel = st->hide_kernel};
	struct view_icicle_priv *p = priv_of(st);
	struct icicle *t;
	char key[KEY_MAX], nk[KEY_MAX];
	bool seen = false, leaf_only = true;
	uint32_t i;

	if (!p)
		return;
	icicle_key_of(f, key, sizeof(key));
	if (icicle_build(w, &q, &t) == 0) {
		for (i = 1; i < t->n; i++) {
			icicle_node_key(t, i, nk, sizeof(nk));
			if (strcmp(nk, key) != 0)
				continue;
			seen = true;
			if (t->nodes[i].first_child != ICICLE_NONE)
				leaf_only = false;
		}
		icicle_free(t);
	}
	st->inverted = seen && leaf_only;
	st->per_thread = false;
	icicle_path_free(&st->sel);
	icicle_path_free(&st->zoom);
	p->sel_node = p->zoom_node = ICICLE_ROOT;
	st->aged_out = false;
	snprintf(p->pending, sizeof(p->pending), "%s", key);
}
