/* Unit tests for icicle: the merged call tree (from literal stacks and
 * from a real window) and the layout, compared as text. The boxes are drawn
 * here the simplest way — "[name   ]", "[]" for two columns, "|" for a
 * thin bar — so a test reads as the picture it checks. Set ICICLE_DUMP=1 to
 * print the drawings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/model/icicle.h"
#include "stacktop/model/window.h"
#include "window_fixture.h"

#define SEC 1000000000ull
#define MAXW 260
#define MAXROWS 256

struct pic {
	char row[MAXROWS][MAXW + 1];
	int nrows;
	struct icicle_box *b;
	size_t n;
};

/* Lay out and draw; every box is also checked against its parent. */
static void draw(const struct icicle *t, uint32_t zoom, int width, int depth, struct pic *p)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(icicle_layout(t, zoom, width, depth, &p->b, &p->n), 0);
	for (size_t i = 0; i < p->n; i++) {
		const struct icicle_box *bx = &p->b[i];
		int w = bx->x1 - bx->x0;
		char *r;

		assert_true(bx->row < MAXROWS && bx->x0 >= 0 && bx->x1 <= width && w >= 1);
		if (i)
			assert_true(bx->row > p->b[i - 1].row ||
				    (bx->row == p->b[i - 1].row && bx->x0 >= p->b[i - 1].x1));
		if (bx->row + 1 > p->nrows) {
			for (int y = p->nrows; y <= bx->row; y++)
				memset(p->row[y], ' ', (size_t)width);
			p->nrows = bx->row + 1;
		}
		r = p->row[bx->row];
		if (w == 1) {
			r[bx->x0] = '|';
		} else {
			const char *name = t->nodes[bx->node].name;
			int nl = (int)strlen(name);

			r[bx->x0] = '[';
			memcpy(r + bx->x0 + 1, name, (size_t)(nl < w - 2 ? nl : w - 2));
			r[bx->x1 - 1] = ']';
		}
	}
	for (int y = 0; y < p->nrows; y++) {
		int e = width;

		while (e > 0 && p->row[y][e - 1] == ' ')
			e--;
		p->row[y][e] = 0;
		if (getenv("ICICLE_DUMP"))
			printf("|%s\n", p->row[y]);
	}
}

static const struct icicle_box *box_of(const struct icicle *t, struct pic *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(t->nodes[p->b[i].node].name, name) == 0)
			return &p->b[i];
	return NULL;
}

static uint32_t find(const struct icicle *t, uint32_t parent, const char *name)
{
	for (uint32_t c = t->nodes[parent].first_child; c != ICICLE_NONE;
	     c = t->nodes[c].next_sibling)
		if (strcmp(t->nodes[c].name, name) == 0)
			return c;
	return ICICLE_NONE;
}

/* main;worker;{alpha 50 → alpha_leaf, beta 30, gamma 20 → {gamma_x, gamma_y}} */
static const struct icicle_stack known[] = {
    {"main;worker;alpha;alpha_leaf", 50},
    {"main;worker;beta", 30},
    {"main;worker;gamma;gamma_y", 10},
    {"main;worker;gamma;gamma_x", 10},
};

/* Node n of t counts total samples, self of them in itself. */
static void assert_counts(const struct icicle *t, uint32_t n, uint64_t total, uint64_t self)
{
	assert_int_equal(t->nodes[n].total, total);
	assert_int_equal(t->nodes[n].self, self);
}

static void test_tree_counts_and_order(void **state)
{
	struct icicle *t;
	uint32_t m, w, g;

	assert_int_equal(icicle_build_from_paths(known, 4, false, &t), 0);
	assert_string_equal(t->nodes[ICICLE_ROOT].name, "all");
	assert_int_equal(t->nodes[ICICLE_ROOT].total, 100);
	m = find(t, ICICLE_ROOT, "main");
	w = find(t, m, "worker");
	assert_counts(t, w, 100, 0);
	assert_int_equal(t->nodes[w].depth, 2);
	/* heaviest first */
	assert_string_equal(t->nodes[t->nodes[w].first_child].name, "alpha");
	g = find(t, w, "gamma");
	assert_int_equal(t->nodes[g].total, 20);
	/* equal totals: by name */
	assert_string_equal(t->nodes[t->nodes[g].first_child].name, "gamma_x");
	assert_int_equal(t->nodes[find(t, g, "gamma_y")].self, 10);
	assert_int_equal(t->nodes[find(t, w, "beta")].self, 30);
	icicle_free(t);
}

static void test_layout_40_columns(void **state)
{
	struct icicle *t;
	struct pic p;

	assert_int_equal(icicle_build_from_paths(known, 4, false, &t), 0);
	draw(t, ICICLE_ROOT, 40, 10, &p);
	assert_int_equal(p.nrows, 5);
	assert_string_equal(p.row[0], "[all                                   ]");
	assert_string_equal(p.row[1], "[main                                  ]");
	assert_string_equal(p.row[2], "[worker                                ]");
	assert_string_equal(p.row[3], "[alpha             ][beta      ][gamma ]");
	assert_string_equal(p.row[4], "[alpha_leaf        ]            [ga][ga]");
	free(p.b);
	icicle_free(t);
}

static void test_layout_250_columns(void **state)
{
	struct icicle *t;
	const struct icicle_box *a, *b, *g, *gx, *gy;
	struct pic p;

	assert_int_equal(icicle_build_from_paths(known, 4, false, &t), 0);
	draw(t, ICICLE_ROOT, 250, 10, &p);
	a = box_of(t, &p, "alpha");
	b = box_of(t, &p, "beta");
	g = box_of(t, &p, "gamma");
	gx = box_of(t, &p, "gamma_x");
	gy = box_of(t, &p, "gamma_y");
	assert_non_null(a), assert_non_null(b), assert_non_null(g);
	assert_int_equal(a->x0, 0), assert_int_equal(a->x1, 125);
	assert_int_equal(b->x0, 125), assert_int_equal(b->x1, 200);
	assert_int_equal(g->x0, 200), assert_int_equal(g->x1, 250);
	assert_int_equal(gx->x0, 200), assert_int_equal(gx->x1, 225);
	assert_int_equal(gy->x0, 225), assert_int_equal(gy->x1, 250);
	assert_int_equal((int)strlen(p.row[3]), 250);
	free(p.b);
	icicle_free(t);
}

/* 200 levels of recursion: one box per level, full width, and max_depth
 * cuts the rows. */
static void test_deep_recursion(void **state)
{
	static char buf[200 * 5 + 16];
	struct icicle_stack s[2];
	struct icicle *t;
	struct pic p;
	size_t o = 0;

	for (int i = 0; i < 200; i++)
		o += (size_t)sprintf(buf + o, "%srec", i ? ";" : "");
	s[0] = (struct icicle_stack){buf, 7};
	s[1] = (struct icicle_stack){"other", 0}; /* an empty stack adds nothing */
	assert_int_equal(icicle_build_from_paths(s, 2, false, &t), 0);
	assert_int_equal(t->n, 1 + 200 + 1);
	draw(t, ICICLE_ROOT, 40, 1000, &p);
	assert_int_equal(p.n, 201);
	assert_int_equal(p.nrows, 201);
	for (int y = 1; y <= 200; y++)
		assert_string_equal(p.row[y], "[rec                                   ]");
	assert_int_equal(t->nodes[p.b[200].node].depth, 200);
	assert_int_equal(t->nodes[p.b[200].node].self, 7);
	free(p.b);
	draw(t, ICICLE_ROOT, 40, 50, &p);
	assert_int_equal(p.n, 50);
	assert_int_equal(p.b[49].row, 49);
	free(p.b);
	icicle_free(t);
}

/* Folded (issue 24): "depth" calling itself 13 times is one node with
 * rec 12 (the most on one stack), the leaves right under it; a run of 3
 * elsewhere counts into the same node; f → g → f is not direct recursion. */
static void test_fold_recursion(void **state)
{
	struct icicle_stack s[] = {
	    {"main;run;depth;depth;depth;depth;depth;depth;depth;depth;depth;depth;depth;depth;"
	     "depth;leaf_a",
	     60},
	    {"main;run;depth;depth;depth;leaf_b", 30},
	    {"main;f;g;f", 10},
	};
	struct icicle_query q = {.fold_recursion = true};
	struct icicle *t;
	struct pic p;

	assert_int_equal(icicle_build_paths(s, 3, &q, &t), 0);
	draw(t, ICICLE_ROOT, 40, 100, &p);
	assert_int_equal(p.nrows, 5); /* all, main, run|f, depth|g, leaves|f */
	for (uint32_t i = 1; i < t->n; i++) {
		if (strcmp(t->nodes[i].name, "depth") == 0) {
			assert_int_equal(t->nodes[i].rec, 12);
			assert_int_equal(t->nodes[i].total, 90);
			assert_int_equal(t->nodes[i].self, 0);
			assert_int_equal(t->nodes[i].depth, 3);
		} else {
			assert_int_equal(t->nodes[i].rec, 0);
		}
		if (strcmp(t->nodes[i].name, "leaf_a") == 0)
			assert_int_equal(t->nodes[i].depth, 4);
	}
	free(p.b);
	icicle_free(t);
	/* Unfolded: one node per call, as before. */
	q.fold_recursion = false;
	assert_int_equal(icicle_build_paths(s, 3, &q, &t), 0);
	draw(t, ICICLE_ROOT, 40, 100, &p);
	assert_int_equal(p.nrows, 17); /* all, main, run, 13 depth, leaf_a */
	free(p.b);
	icicle_free(t);
}

static struct icicle *fanout(int nkids, uint64_t heavy, uint64_t each)
{
	struct icicle_stack *s = calloc((size_t)nkids + 1, sizeof(*s));
	char(*names)[32] = calloc((size_t)nkids + 1, 32);
	struct icicle *t;

	assert_non_null(s), assert_non_null(names);
	for (int i = 0; i < nkids; i++) {
		snprintf(names[i], 32, "p;k%03d", i);
		s[i] = (struct icicle_stack){names[i], i == 0 ? heavy : each};
	}
	assert_int_equal(icicle_build_from_paths(s, (size_t)nkids, false, &t), 0);
	free(names);
	free(s);
	return t;
}

/* 500 equal children in 40 columns: all 40 columns used, by the first 40
 * children (by name: equal weights), each a thin bar, none overflowing. */
static void test_fanout_500_in_40(void **state)
{
	struct icicle *t = fanout(500, 1, 1);
	struct pic p;

	draw(t, ICICLE_ROOT, 40, 10, &p);
	assert_int_equal(p.nrows, 3);
	assert_string_equal(p.row[2], "||||||||||||||||||||||||||||||||||||||||");
	assert_string_equal(t->nodes[p.b[2].node].name, "k000");
	assert_string_equal(t->nodes[p.b[41].node].name, "k039");
	assert_int_equal(p.n, 2 + 40);
	free(p.b);
	icicle_free(t);
}

/* A parent with self time has free columns: 20 light children that round
 * to nothing each get a thin bar there. Without free columns, the heavy
 * sibling gives at most 1/32 of its width, so 8 light ones get 1 bar at
 * 40 columns; at 250 columns a heavy 249 gives 7, and the one light child
 * that rounded up to a column gives its column to a heavier (earlier) one. */
static void test_fanout_thin_bars_where_room(void **state)
{
	struct icicle_stack s[22];
	char names[22][16];
	const struct icicle_box *h;
	struct icicle *t;
	struct pic p;

	s[0] = (struct icicle_stack){"p", 5000};
	s[1] = (struct icicle_stack){"p;k000", 5000};
	for (int i = 2; i < 22; i++) {
		snprintf(names[i], sizeof(names[i]), "p;k%03d", i - 1);
		s[i] = (struct icicle_stack){names[i], 1};
	}
	assert_int_equal(icicle_build_from_paths(s, 22, false, &t), 0);
	draw(t, ICICLE_ROOT, 40, 10, &p);
	assert_int_equal(p.n, 2 + 21);
	assert_string_equal(p.row[2], "[k000              ]||||||||||||||||||||");
	free(p.b);
	icicle_free(t);

	t = fanout(9, 10000, 1);
	draw(t, ICICLE_ROOT, 40, 10, &p);
	assert_int_equal(p.n, 2 + 2);
	h = box_of(t, &p, "k000");
	assert_int_equal(h->x0, 0), assert_int_equal(h->x1, 39);
	assert_string_equal(p.row[2], "[k000                                 ]|");
	free(p.b);
	icicle_free(t);

	t = fanout(500, 100000, 1);
	draw(t, ICICLE_ROOT, 250, 10, &p);
	h = box_of(t, &p, "k000");
	assert_int_equal(h->x1 - h->x0, 242);
	assert_int_equal(p.n, 2 + 1 + 8);
	assert_string_equal(t->nodes[p.b[p.n - 1].node].name, "k008");
	assert_int_equal(p.b[p.n - 1].x1, 250);
	free(p.b);
	icicle_free(t);
}

/* Random trees at many widths: children never overflow the parent, never
 * overlap, when the children hold all of the parent's samples the last one
 * ends on the parent's last column, and every box is within 1 + 1/32 of
 * its exact width (W * total / parent total). */
static void test_rounding_properties(void **state)
{
	struct icicle_stack s[64];
	static char names[64][64];
	uint64_t seed = 42;
	struct icicle *t;

	for (int round = 0; round < 200; round++) {
		int ns = 1 + (int)(seed % 60), width = 20 + (int)((seed >> 8) % 230);

		for (int i = 0; i < ns; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			snprintf(names[i], 64, "r;f%d;g%d;h%d", (int)(seed >> 60) % 5,
				 (int)(seed >> 50) % 7, (int)(seed >> 40) % 9);
			s[i] = (struct icicle_stack){names[i], 1 + (seed >> 20) % 1000};
		}
		assert_int_equal(icicle_build_from_paths(s, (size_t)ns, false, &t), 0);
		struct icicle_box *b;
		size_t n;

		assert_int_equal(icicle_layout(t, ICICLE_ROOT, width, 10, &b, &n), 0);
		for (size_t i = 0; i < n; i++) {
			const struct icicle_node *nd = &t->nodes[b[i].node];
			size_t nk = 0, shown = 0;
			int last_x1 = b[i].x0;

			for (size_t k = 0; k < n; k++) {
				if (b[k].node == ICICLE_ROOT || nd->first_child == ICICLE_NONE ||
				    t->nodes[b[k].node].parent != b[i].node)
					continue;
				assert_true(b[k].x0 >= last_x1);
				assert_true(b[k].x1 <= b[i].x1);
				last_x1 = b[k].x1;
				shown++;
			}
			for (uint32_t c = nd->first_child; c != ICICLE_NONE;
			     c = t->nodes[c].next_sibling)
				nk++;
			if (b[i].node != ICICLE_ROOT) {
				const struct icicle_box *pb = NULL;

				for (size_t k = 0; k < n; k++)
					if (b[k].node == nd->parent)
						pb = &b[k];
				assert_non_null(pb);
				double exact = (double)(pb->x1 - pb->x0) * (double)nd->total /
					       (double)t->nodes[nd->parent].total;
				double d = (double)(b[i].x1 - b[i].x0) - exact;

				assert_true(d <= 1.0 + 1e-9 && d >= -(1.0 + exact / 32 + 1e-9));
			}
			(void)shown;
			if (nk && nd->self == 0 && b[i].row + 1 < 10)
				assert_int_equal(last_x1, b[i].x1);
		}
		free(b);
		icicle_free(t);
		seed = seed * 6364136223846793005ull + 1;
	}
}

/* Bottom-up: leaf functions under the root, their callers below; self only
 * on the first level; the same function called from two places merges. */
static void test_inverted(void **state)
{
	static const struct icicle_stack s[] = {
	    {"main;a;leaf", 6},
	    {"main;b;leaf", 3},
	    {"main;b", 1},
	};
	struct icicle *t;
	uint32_t leaf, b, a, bm;
	struct pic p;

	assert_int_equal(icicle_build_from_paths(s, 3, true, &t), 0);
	assert_true(t->inverted);
	leaf = find(t, ICICLE_ROOT, "leaf");
	b = find(t, ICICLE_ROOT, "b");
	assert_int_not_equal(leaf, ICICLE_NONE);
	assert_counts(t, leaf, 9, 9);
	assert_int_equal(t->nodes[b].total, 1);
	a = find(t, leaf, "a");
	bm = find(t, leaf, "b");
	assert_counts(t, a, 6, 0);
	assert_int_equal(t->nodes[bm].total, 3);
	assert_int_equal(t->nodes[find(t, a, "main")].total, 6);
	assert_int_equal(find(t, ICICLE_ROOT, "main"), ICICLE_NONE);
	draw(t, ICICLE_ROOT, 20, 10, &p);
	assert_string_equal(p.row[1], "[leaf            ][]");
	assert_string_equal(p.row[2], "[a         ][b   ][]");
	assert_string_equal(p.row[3], "[main      ][main]"); /* b;main sits on row 2 */
	free(p.b);
	icicle_free(t);
}

/* Zoom: the zoomed node spans the whole width on row 0. */
static void test_zoom(void **state)
{
	struct icicle *t;
	uint32_t w, g;
	struct pic p;

	assert_int_equal(icicle_build_from_paths(known, 4, false, &t), 0);
	w = find(t, find(t, ICICLE_ROOT, "main"), "worker");
	g = find(t, w, "gamma");
	draw(t, g, 40, 10, &p);
	assert_int_equal(p.nrows, 2);
	assert_string_equal(p.row[0], "[gamma                                 ]");
	assert_string_equal(p.row[1], "[gamma_x           ][gamma_y           ]");
	assert_int_equal(p.b[0].node, g);
	free(p.b);
	/* max_depth 1: only the zoom node */
	draw(t, w, 40, 1, &p);
	assert_int_equal(p.n, 1);
	free(p.b);
	/* no node */
	assert_int_equal(icicle_layout(t, 9999, 40, 10, &p.b, &p.n), 0);
	assert_int_equal(p.n, 0);
	free(p.b);
	icicle_free(t);
}

/* Paths: keys from below the root, resolved after a rebuild with more
 * samples, and partially when the tail is gone. */
static void test_paths(void **state)
{
	static const struct icicle_stack more[] = {
	    {"main;worker;zeta", 500},
	    {"main;worker;gamma;gamma_x", 10},
	};
	struct icicle *t, *t2;
	struct icicle_path p = {0}, q = {0};
	uint32_t gy, r;
	size_t matched;

	assert_int_equal(icicle_build_from_paths(known, 4, false, &t), 0);
	gy = find(t, find(t, find(t, find(t, ICICLE_ROOT, "main"), "worker"), "gamma"), "gamma_y");
	assert_int_equal(icicle_path_of(t, gy, &p), 0);
	assert_int_equal(p.n, 4);
	assert_string_equal(p.keys[3], "u\x1fgamma_y");
	assert_int_equal(icicle_path_resolve(t, &p, &matched), gy);
	assert_int_equal(matched, 4);
	assert_true(icicle_is_ancestor(t, ICICLE_ROOT, gy));
	assert_false(icicle_is_ancestor(t, gy, ICICLE_ROOT));

	assert_int_equal(icicle_build_from_paths(more, 2, false, &t2), 0);
	r = icicle_path_resolve(t2, &p, &matched);
	assert_int_equal(matched, 3);
	assert_string_equal(t2->nodes[r].name, "gamma");
	assert_int_equal(icicle_path_copy(&p, &q), 0);
	assert_int_equal(q.n, 4);
	icicle_path_free(&p);
	icicle_path_free(&q);
	assert_int_equal(icicle_path_resolve(t2, &p, &matched), ICICLE_ROOT);
	assert_int_equal(matched, 0);
	icicle_free(t2);
	icicle_free(t);
}

static uint32_t mkframe(struct window *w, uint64_t pc, bool kernel, const char *mod,
			const char *func)
{
	struct sym_info si = {.func = func, .module = mod, .offset = 0x1a2b, .kernel = kernel};
	int64_t id = frames_preset(window_frames_mut(w), 4242, pc, kernel, &si, false);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* From a window: frames of one function at different pcs merge; threads
 * filter; kernel frames hide; per-thread roots split. */
/* Names thread 11 only. */
static void label_of(const void *ctx, int tid, char *buf, size_t size)
{
	if (tid == 11)
		snprintf(buf, size, "4500:%d worker", tid);
}

static void test_build_from_window(void **state)
{
	struct window *w = *state;
	struct icicle *t;
	struct icicle_query q = {0};
	uint32_t fm, fw1, fw2, fl, fk, fanon, st[4];
	uint32_t m, wk;
	char key[256];

	fm = mkframe(w, 0x1000, false, "app", "main");
	fw1 = mkframe(w, 0x2000, false, "app", "work");
	fw2 = mkframe(w, 0x2010, false, "app", "work");
	fl = mkframe(w, 0x3000, false, "libc.so.6", "memcpy");
	fk = mkframe(w, 0xffffffff81000000ull, true, "[kernel]", "clear_page");
	fanon = mkframe(w, 0x7000, false, "libfoo.so", NULL);
	st[0] = fm, st[1] = fw1, st[2] = fl;
	assert_int_equal(window_add(w, 30 * SEC, 10, st, 3, 5), 0);
	st[1] = fw2;
	assert_int_equal(window_add(w, 30 * SEC, 11, st, 3, 7), 0);
	st[3] = fk;
	assert_int_equal(window_add(w, 30 * SEC, 11, st, 4, 2), 0);
	st[1] = fanon;
	assert_int_equal(window_add(w, 30 * SEC, 10, st, 2, 1), 0);

	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[ICICLE_ROOT].total, 15);
	m = find(t, ICICLE_ROOT, "main");
	wk = find(t, m, "work");
	assert_int_equal(t->nodes[wk].total, 14);
	assert_true(t->nodes[wk].frame == fw2); /* from its heaviest stack */
	assert_string_equal(t->nodes[wk].module, "app");
	assert_counts(t, find(t, wk, "memcpy"), 14, 12);
	assert_true(t->nodes[find(t, find(t, wk, "memcpy"), "clear_page")].kernel);
	assert_int_equal(t->nodes[find(t, m, "libfoo.so+0x1a2b")].total, 1);
	icicle_frame_key(w, fw1, key, sizeof(key));
	assert_string_equal(key, "uapp\x1fwork");
	assert_int_equal(icicle_child_by_key(t, m, key), wk);
	icicle_frame_key(w, fk, key, sizeof(key));
	assert_string_equal(key, "k[kernel]\x1f"
				 "clear_page");
	icicle_free(t);

	q.hide_kernel = true;
	assert_int_equal(icicle_build(w, &q, &t), 0);
	wk = find(t, find(t, ICICLE_ROOT, "main"), "work");
	assert_int_equal(t->nodes[find(t, wk, "memcpy")].self, 14);
	assert_int_equal(t->nodes[find(t, wk, "memcpy")].first_child, ICICLE_NONE);
	icicle_free(t);

	q = (struct icicle_query){.tid = 10};
	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[ICICLE_ROOT].total, 6);
	icicle_free(t);

	q = (struct icicle_query){.per_thread_roots = true};
	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_true(t->per_thread);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "tid 11")].total, 9);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "tid 10")].total, 6);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "tid 11")].tid, 11);
	icicle_node_key(t, find(t, ICICLE_ROOT, "tid 11"), key, sizeof(key));
	assert_string_equal(key, "t\x1ftid 11");
	icicle_free(t);

	/* Named by the query's label ("PID:TID name" with several
	 * processes); a thread the label does not know stays "tid N". */
	q = (struct icicle_query){.per_thread_roots = true, .thread_label = label_of};
	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "4500:11 worker")].total, 9);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "4500:11 worker")].tid, 11);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "tid 10")].total, 6);
	icicle_free(t);

	q = (struct icicle_query){.inverted = true};
	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "clear_page")].total, 2);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "memcpy")].total, 12);
	assert_int_equal(t->nodes[find(t, find(t, ICICLE_ROOT, "memcpy"), "work")].total, 12);
	icicle_free(t);
}

/* Whole machine: the stacks start at their process's root frame (a box
 * under the root); narrowed to a process (query.pid), only its stacks,
 * without the root frame, bottom-up too. */
static void test_process_pid(void **state)
{
	struct window *w = *state;
	struct icicle *t;
	struct icicle_query q = {0};
	uint32_t sa[3], sb[3];

	sa[0] = (uint32_t)frames_process(window_frames_mut(w), 100, "alpha");
	sb[0] = (uint32_t)frames_process(window_frames_mut(w), 200, "beta");
	sa[1] = sb[1] = mkframe(w, 0x1000, false, "app", "main");
	sa[2] = mkframe(w, 0x2000, false, "app", "crunch");
	sb[2] = mkframe(w, 0x3000, false, "app", "wait_io");
	assert_int_equal(window_add(w, 30 * SEC, 101, sa, 3, 6), 0);
	assert_int_equal(window_add(w, 30 * SEC, 201, sb, 3, 3), 0);

	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "alpha (100)")].total, 6);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "beta (200)")].total, 3);
	icicle_free(t);

	q.pid = 200;
	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[ICICLE_ROOT].total, 3);
	assert_counts(t, find(t, find(t, ICICLE_ROOT, "main"), "wait_io"), 3, 3);
	assert_int_equal(t->nodes[find(t, ICICLE_ROOT, "main")].depth, 1);
	icicle_free(t);

	q = (struct icicle_query){.pid = 100, .inverted = true};
	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->nodes[ICICLE_ROOT].total, 6);
	uint32_t c = find(t, ICICLE_ROOT, "crunch"), m = find(t, c, "main");
	assert_int_equal(t->nodes[m].total, 6);
	assert_int_equal(t->nodes[m].first_child, ICICLE_NONE); /* no root frame above main */
	icicle_free(t);
}

/* An empty window: only the root, no boxes. */
static void test_empty(void **state)
{
	struct window *w = *state;
	struct icicle *t;
	struct icicle_query q = {0};
	struct icicle_box *b;
	size_t n;

	assert_int_equal(icicle_build(w, &q, &t), 0);
	assert_int_equal(t->n, 1);
	assert_int_equal(icicle_layout(t, ICICLE_ROOT, 80, 10, &b, &n), 0);
	assert_int_equal(n, 0);
	free(b);
	icicle_free(t);
}

TEST_MAIN(NULL, NULL, TEST(test_fold_recursion), TEST(test_tree_counts_and_order),
	  TEST(test_layout_40_columns), TEST(test_layout_250_columns), TEST(test_deep_recursion),
	  TEST(test_fanout_500_in_40), TEST(test_fanout_thin_bars_where_room),
	  TEST(test_rounding_properties), TEST(test_inverted), TEST(test_zoom), TEST(test_paths),
	  TEST_WINDOW(test_build_from_window), TEST_WINDOW(test_empty),
	  TEST_WINDOW(test_process_pid))
