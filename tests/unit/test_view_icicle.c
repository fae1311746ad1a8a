/* Unit tests for view_icicle: a window with a known call tree and fake
 * symbols is rendered into grids and compared as text rows; keys move the
 * selection and zoom, search and invert; the selection survives rebuilds
 * and says so when its path ages out. Set VIEW_ICICLE_DUMP=1 to print the
 * rendered grids. */
#include <errno.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"

#include "stacktop/ui/keys.h"
#include "stacktop/ui/view_icicle.h"

#define SEC FIXTURE_SEC

/* The fixture's frames have file:line, no offset; all samples are of
 * thread 4242, at t seconds. */
#define mkframe(w, pc, kernel, mod, func, file, line)                                              \
	fixture_frame(w, pc, kernel, mod, func, file, line, 0)
#define add(fx, t, count, ...) fixture_add((fx)->w, t, FIXTURE_PID, count, __VA_ARGS__)

struct fixture {
	struct window *w;
	struct view_header h;
	struct view_icicle_state st;
	struct grid g;
	uint32_t f_start, f_main, f_worker, f_alpha, f_aleaf, f_beta, f_gamma, f_gx, f_gy, f_gy2,
	    f_memcpy, f_futex, f_read, f_long;
};

/* 1000 samples at t=30 s:
 *   start;main;worker;alpha;alpha_leaf   500
 *   start;main;worker;beta               300
 *   start;main;worker;gamma;gamma_x      100
 *   start;main;worker;gamma;gamma_y      100 (two pcs: 60 + 40) */
static void add_known(struct fixture *fx, uint64_t t)
{
	add(fx, t, 500, 5, fx->f_start, fx->f_main, fx->f_worker, fx->f_alpha, fx->f_aleaf);
	add(fx, t, 300, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_beta);
	add(fx, t, 100, 5, fx->f_start, fx->f_main, fx->f_worker, fx->f_gamma, fx->f_gx);
	add(fx, t, 60, 5, fx->f_start, fx->f_main, fx->f_worker, fx->f_gamma, fx->f_gy);
	add(fx, t, 40, 5, fx->f_start, fx->f_main, fx->f_worker, fx->f_gamma, fx->f_gy2);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fixture_open(fx, 10, &fx->w) < 0)
		return -1;
	fx->f_start = mkframe(fx->w, 0x1000, false, "libc.so.6", "__libc_start_main", NULL, 0);
	fx->f_main = mkframe(fx->w, 0x2000, false, "tree", "main", "tree.c", 90);
	fx->f_worker = mkframe(fx->w, 0x3000, false, "tree", "worker", "tree.c", 70);
	fx->f_alpha = mkframe(fx->w, 0x4000, false, "tree", "alpha", "tree.c", 40);
	fx->f_aleaf = mkframe(fx->w, 0x4100, false, "tree", "alpha_leaf", "tree.c", 33);
	fx->f_beta = mkframe(fx->w, 0x5000, false, "tree", "beta", "tree.c", 50);
	fx->f_gamma = mkframe(fx->w, 0x6000, false, "tree", "gamma", "tree.c", 60);
	fx->f_gx = mkframe(fx->w, 0x6100, false, "tree", "gamma_x", "tree.c", 52);
	fx->f_gy = mkframe(fx->w, 0x6200, false, "tree", "gamma_y", "tree.c", 56);
	fx->f_gy2 = mkframe(fx->w, 0x6210, false, "tree", "gamma_y", "tree.c", 57);
	fx->f_memcpy = mkframe(fx->w, 0x7f00, false, "libc.so.6", "memcpy", NULL, 0);
	fx->f_futex =
	    mkframe(fx->w, 0xffffffff81000000ull, true, "[kernel]", "futex_wait", NULL, 0);
	fx->f_read = mkframe(fx->w, 0x7f10, false, "libc.so.6", "__libc_read", NULL, 0);
	fx->f_long = mkframe(fx->w, 0x8000, false, "tree",
			     "std::__detail::_Map_base<std::string, std::pair<std::string const, "
			     "int>>::operator[](std::string const&)",
			     NULL, 0);
	add_known(fx, 30);
	fx->h = FIXTURE_HEADER(.cmdline = "./tree", .nthreads = 1, .rate_hz = 99, .achieved_hz = 99,
			       .samples_window = 1000, .samples_total = 1000, .window_s = 10,
			       .span_s = 10);
	return fixture_ready(state, fx, &fx->g);
}

FIXTURE_TEARDOWN(view_icicle_state_free)

static void render(struct fixture *fx, int w, int h)
{
	fixture_render(fx, w, h, view_icicle_update(&fx->st, &fx->h, fx->w, w, h),
		       view_icicle_render(&fx->g, &fx->h, &fx->st), "VIEW_ICICLE_DUMP");
}

/* The detail line (second to last row). */
static const char *detail(struct fixture *fx)
{
	return row(fx, fx->g.h - 2);
}

static bool has(const char *s, const char *sub)
{
	if (!strstr(s, sub)) {
		printf("'%s' not in '%s'\n", sub, s);
		return false;
	}
	return true;
}

static void keys(struct fixture *fx, const char *s)
{
	for (; *s; s++)
		view_icicle_key(&fx->st, (unsigned char)*s);
}

static void key(struct fixture *fx, int k, int times)
{
	while (times-- > 0)
		view_icicle_key(&fx->st, k);
}

static uint16_t attr_at(struct fixture *fx, int x, int y)
{
	return grid_at(&fx->g, x, y)->attr;
}

static const char *footer80 =
    " arrows  Enter zoom  Esc back  / search  n/N match  f bottom-up  c colour";

/* The first screen: breadcrumb, one row per depth, widths by share,
 * labels with percentages where they fit, the root selected. */
static void test_render_80x24(void **state)
{
	struct fixture *fx = *state;

	render(fx, 80, 24);
	assert_string_equal(row(fx, 2), "all 100%");
	assert_string_equal(
	    row(fx, 3),
	    "[all 100%                                                                      ]");
	assert_string_equal(
	    row(fx, 4),
	    "[__libc_start_main 100%                                                        ]");
	assert_string_equal(
	    row(fx, 5),
	    "[main 100%                                                                     ]");
	assert_string_equal(
	    row(fx, 6),
	    "[worker 100%                                                                   ]");
	assert_string_equal(
	    row(fx, 7),
	    "[alpha 50.0%                           ][beta 30.0%            ][gamma 20.0%   ]");
	assert_string_equal(
	    row(fx, 8),
	    "[alpha_leaf 50.0%                      ]                        [..ma_x][..ma_y]");
	assert_string_equal(row(fx, 9), "");
	assert_string_equal(detail(fx),
			    "selected: all  self 0.0%  total 100%  if free: inf (whole profile)");
	assert_string_equal(row(fx, 23), footer80);
	assert_true(attr_at(fx, 0, 3) & GRID_REVERSE); /* the root is selected */
	assert_false(attr_at(fx, 0, 4) & GRID_REVERSE);
	assert_int_equal(fx->st.selected_frame, UINT32_MAX);
	assert_false(fx->st.aged_out);
}

/* 120 columns: alpha/beta/gamma take 60/36/24 columns; gamma_x/y 12 each
 * with their names whole; the detail line has room for sample counts. */
static void test_render_120(void **state)
{
	struct fixture *fx = *state;

	render(fx, 120, 16);
	assert_string_equal(row(fx, 7),
			    "[alpha 50.0%                                               ][beta "
			    "30.0%                        ][gamma 20.0%           ]");
	assert_string_equal(row(fx, 8),
			    "[alpha_leaf 50.0%                                          ]          "
			    "                          [gamma_x   ][gamma_y   ]");
	assert_string_equal(detail(fx), "selected: all  self 0.0% (0 samples)  total 100% (1,000 "
					"samples)  if free: inf (whole profile)");
	assert_string_equal(row(fx, 15),
			    " arrows  Enter zoom  Esc back  / search  n/N match  f bottom-up  c "
			    "colour            app lib kernel lock I/O runtime GC");
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 120 - 36 + 1, 15)->attr), GRID_C_GREEN);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 120 - 11, 15)->attr), GRID_C_YELLOW);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 120 - 3, 15)->attr), GRID_C_GC);
	render(fx, 200, 16);
	assert_true(has(row(fx, 15), "c colour  t threads  ? help  q quit"));
}

static void test_too_small(void **state)
{
	struct fixture *fx = *state;

	render(fx, 59, 24);
	assert_string_equal(row(fx, 12), "          terminal too small: 59x24 (need 60x12)");
	assert_string_equal(row(fx, 0), "");
	render(fx, 80, 11);
	assert_string_equal(row(fx, 5),
			    "                     terminal too small: 80x11 (need 60x12)");
	render(fx, 60, 12);
	assert_string_equal(row(fx, 3),
			    "[all 100%                                                  ]");
}

/* A name too long for the detail line is cut; the numbers after it are
 * what the line is for and stay whole. */
static void test_detail_long_name(void **state)
{
	struct fixture *fx = *state;
	uint32_t f = mkframe(fx->w, 0x9000, true, "[kernel]",
			     "asm_sysvec_apic_timer_interrupt_with_a_much_longer_name", NULL, 0);

	add(fx, 30, 1, 5, fx->f_start, fx->f_main, fx->f_worker, fx->f_beta, f);
	render(fx, 80, 24);
	key(fx, KEYS_DOWN, 4);	/* alpha */
	key(fx, KEYS_RIGHT, 1); /* beta */
	key(fx, KEYS_DOWN, 1);	/* its one callee */
	render(fx, 80, 24);
	assert_string_equal(detail(fx), "selected: asm_sysvec_apic_timer_i\u2026"
					"  self 0.1%  total 0.1%  if free: 1.00x faster");
}

/* Arrows: down to the heaviest callee, left/right along the row, up to
 * the caller; the detail line follows with file:line, module, Amdahl. */
static void test_keys_move(void **state)
{
	struct fixture *fx = *state;
	/* 140 columns: room for the whole detail line */

	render(fx, 140, 20);
	key(fx, KEYS_DOWN, 3);
	render(fx, 140, 20);
	assert_string_equal(detail(fx),
			    "selected: worker  tree.c:70  module tree  self 0.0% (0 samples)  "
			    "total 100% (1,000 samples)  if free: inf (whole profile)");
	assert_int_equal(fx->st.selected_frame, fx->f_worker);
	key(fx, KEYS_DOWN, 1);
	render(fx, 140, 20);
	assert_string_equal(detail(fx),
			    "selected: alpha  tree.c:40  module tree  self 0.0% (0 samples)  total "
			    "50.0% (500 samples)  if free: 2.00x faster");
	assert_true(attr_at(fx, 0, 7) & GRID_REVERSE);
	assert_true(attr_at(fx, 69, 7) & GRID_REVERSE);
	assert_false(attr_at(fx, 70, 7) & GRID_REVERSE);
	key(fx, KEYS_RIGHT, 1);
	render(fx, 140, 20);
	assert_true(has(detail(fx), "selected: beta  tree.c:50  module tree  self 30.0% (300 "
				    "samples)  total 30.0% (300 samples)  if free: 1.43x faster"));
	key(fx, KEYS_RIGHT, 3); /* stops at the last box of the row */
	render(fx, 140, 20);
	assert_true(has(detail(fx), "selected: gamma  tree.c:60"));
	key(fx, KEYS_DOWN, 1);
	key(fx, KEYS_RIGHT, 1);
	render(fx, 140, 20);
	/* gamma_y: two pcs merged, the location of the heavier one */
	assert_true(
	    has(detail(fx), "selected: gamma_y  tree.c:56  module tree  self 10.0% (100 samples)"));
	key(fx, KEYS_LEFT, 1);
	render(fx, 140, 20);
	assert_true(has(detail(fx), "selected: gamma_x"));
	key(fx, KEYS_LEFT, 1); /* gap (beta has no callee): alpha_leaf */
	render(fx, 140, 20);
	assert_true(has(detail(fx), "selected: alpha_leaf"));
	key(fx, KEYS_DOWN, 1); /* a leaf: stays */
	key(fx, KEYS_UP, 2);
	render(fx, 140, 20);
	assert_true(has(detail(fx), "selected: worker"));
	key(fx, KEYS_UP, 10); /* stops at the root */
	render(fx, 140, 20);
	assert_true(has(detail(fx), "selected: all"));
	assert_false(view_icicle_key(&fx->st, 'q').kind); /* for main */
	assert_false(view_icicle_key(&fx->st, '1').kind);
}

/* Enter zooms: the breadcrumb shows the path and the zoomed frame spans
 * the whole width; Esc/Backspace zoom out one level at a time. */
static void test_keys_zoom(void **state)
{
	struct fixture *fx = *state;

	render(fx, 80, 16);
	key(fx, KEYS_DOWN, 4);
	key(fx, KEYS_RIGHT, 2); /* gamma */
	key(fx, KEYS_ENTER, 1);
	render(fx, 80, 16);
	assert_string_equal(row(fx, 2),
			    "all 100%  >  ..  >  main 100%  >  worker 100%  >  gamma 20.0%");
	assert_string_equal(
	    row(fx, 3),
	    "[gamma 20.0%                                                                   ]");
	assert_string_equal(
	    row(fx, 4),
	    "[gamma_x 10.0%                         ][gamma_y 10.0%                         ]");
	assert_string_equal(row(fx, 5), "");
	key(fx, KEYS_DOWN, 1);
	key(fx, KEYS_RIGHT, 1);
	render(fx, 80, 16);
	assert_true(attr_at(fx, 40, 4) & GRID_REVERSE);
	/* up from the zoom root zooms out with it */
	key(fx, KEYS_UP, 2);
	render(fx, 80, 16);
	assert_string_equal(row(fx, 2),
			    "all 100%  >  __libc_start_main 100%  >  main 100%  >  worker 100%");
	assert_true(has(detail(fx), "selected: worker"));
	key(fx, KEYS_DOWN, 1);
	key(fx, KEYS_ENTER, 1);
	render(fx, 80, 16);
	assert_string_equal(
	    row(fx, 3),
	    "[alpha 50.0%                                                                   ]");
	assert_string_equal(
	    row(fx, 4),
	    "[alpha_leaf 50.0%                                                              ]");
	assert_true(view_icicle_key(&fx->st, KEYS_ESC).kind);
	render(fx, 80, 16);
	assert_string_equal(
	    row(fx, 3),
	    "[worker 100%                                                                   ]");
	assert_true(has(detail(fx), "selected: alpha")); /* the selection stays */
	assert_true(view_icicle_key(&fx->st, KEYS_BACKSPACE).kind);
	key(fx, KEYS_ESC, 2);
	render(fx, 80, 16);
	assert_string_equal(row(fx, 2), "all 100%");
	assert_false(view_icicle_key(&fx->st, KEYS_ESC).kind); /* nothing left: main's */
	assert_int_equal(fx->st.zoom.n, 0);
}

/* A long breadcrumb keeps "all" and the end, with an ellipsis between. */
static void test_breadcrumb_cut(void **state)
{
	struct fixture *fx = *state;

	fx->st.utf8 = true;
	render(fx, 60, 16);
	key(fx, KEYS_DOWN, 4);
	key(fx, KEYS_ENTER, 1);
	render(fx, 60, 16);
	assert_string_equal(
	    row(fx, 2), "all 100%  >  \xe2\x80\xa6  >  main 100%  >  worker 100%  >  alpha 50.0%");
}

/* '/' search: typed characters (every key is the search's while typing),
 * live match count, Enter accepts and selects the first match, matches
 * underlined, n/N cycle, Esc cancels typing, Esc at the root clears. */
static void test_search(void **state)
{
	struct fixture *fx = *state;

	render(fx, 100, 16);
	assert_true(view_icicle_key(&fx->st, '/').kind);
	assert_true(fx->st.editing_search);
	keys(fx, "gamma");
	assert_true(view_icicle_key(&fx->st, 'q').kind); /* typed, not quit */
	key(fx, KEYS_BACKSPACE, 1);
	render(fx, 100, 16);
	assert_string_equal(row(fx, 2), "all 100%                                                  "
					"           search: gamma_  3 matches 20.0%");
	assert_int_equal(fx->st.nmatches, 3);
	key(fx, KEYS_ENTER, 1);
	assert_false(fx->st.editing_search);
	assert_string_equal(fx->st.search, "gamma");
	render(fx, 100, 16);
	assert_string_equal(row(fx, 2), "all 100%                                                  "
					"            search: gamma  3 matches 20.0%");
	assert_true(has(detail(fx), "selected: gamma  tree.c:60"));
	assert_true(fx->st.match_share > 0.199 && fx->st.match_share < 0.201);
	/* matches bold+underlined, others dimmed */
	assert_true(attr_at(fx, 90, 8) & GRID_UNDERLINE);
	assert_true(attr_at(fx, 10, 7) & GRID_DIM);
	assert_false(attr_at(fx, 10, 7) & GRID_UNDERLINE);
	key(fx, 'n', 1);
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: gamma_x"));
	key(fx, 'n', 1);
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: gamma_y"));
	key(fx, 'n', 1); /* wraps */
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: gamma  "));
	key(fx, 'N', 1);
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: gamma_y"));
	/* Esc while typing: the old search stays */
	keys(fx, "/beta");
	key(fx, KEYS_ESC, 1);
	assert_false(fx->st.editing_search);
	assert_string_equal(fx->st.search, "gamma");
	/* a regex */
	keys(fx, "/^(alpha|beta)$");
	key(fx, KEYS_ENTER, 1);
	render(fx, 100, 16);
	assert_int_equal(fx->st.nmatches, 2);
	assert_true(has(row(fx, 2), "search: ^(alpha|beta)$  2 matches 80.0%"));
	assert_true(has(detail(fx), "selected: alpha  "));
	/* nothing matches */
	keys(fx, "/zzz");
	key(fx, KEYS_ENTER, 1);
	render(fx, 100, 16);
	assert_true(has(row(fx, 2), "search: zzz  no match"));
	assert_false(attr_at(fx, 10, 7) & GRID_DIM);
	/* Esc at the root clears the search */
	assert_true(view_icicle_key(&fx->st, KEYS_ESC).kind);
	render(fx, 100, 16);
	assert_string_equal(row(fx, 2), "all 100%");
	assert_false(view_icicle_key(&fx->st, KEYS_ESC).kind);
}

/* An invalid regex falls back to a substring; the combined share counts a
 * stack once even when it has several matches (recursion, a;...;a). */
static void test_search_substring_and_once_per_stack(void **state)
{
	struct fixture *fx = *state;

	add(fx, 30, 1000, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_long);
	add(fx, 30, 2000, 5, fx->f_start, fx->f_main, fx->f_main, fx->f_main, fx->f_memcpy);
	fx->st.unfold_recursion = true; /* main;main;main: three nodes */
	render(fx, 100, 16);
	keys(fx, "/operator[");
	key(fx, KEYS_ENTER, 1);
	render(fx, 100, 16);
	assert_int_equal(fx->st.nmatches, 1);
	assert_true(has(row(fx, 2), "search: operator[  1 match 25.0% (substring)"));
	keys(fx, "/^main$");
	key(fx, KEYS_ENTER, 1);
	render(fx, 100, 16);
	assert_int_equal(fx->st.nmatches, 3);
	assert_true(has(row(fx, 2), "3 matches 100%"));
	/* x folds the recursion back: one "main ×3" node, one match. */
	key(fx, 'x', 1);
	render(fx, 100, 16);
	assert_false(fx->st.unfold_recursion);
	assert_int_equal(fx->st.nmatches, 1);
	assert_true(has(row(fx, 2), "1 match 100%"));
}

/* f: bottom-up, leaf functions on the first row under "all" and their
 * callers below; the selected function stays selected. */
static void test_invert(void **state)
{
	struct fixture *fx = *state;

	render(fx, 80, 16);
	key(fx, KEYS_DOWN, 4);	/* alpha */
	key(fx, KEYS_RIGHT, 1); /* beta */
	assert_true(view_icicle_key(&fx->st, 'f').kind);
	render(fx, 80, 16);
	assert_true(fx->st.inverted);
	assert_string_equal(row(fx, 2), "bottom-up: all 100%");
	assert_string_equal(
	    row(fx, 4),
	    "[alpha_leaf 50.0%                      ][beta 30.0%            ][..ma_x][..ma_y]");
	assert_string_equal(
	    row(fx, 5),
	    "[alpha 50.0%                           ][worker 30.0%          ][gamma ][gamma ]");
	assert_string_equal(
	    row(fx, 6),
	    "[worker 50.0%                          ][main 30.0%            ][worker][worker]");
	assert_true(has(detail(fx), "selected: beta  tree.c:50  self 30.0%  total 30.0%"));
	assert_true(attr_at(fx, 40, 4) & GRID_REVERSE);
	assert_true(has(row(fx, 15), "f top-down"));
	key(fx, 'f', 1);
	render(fx, 80, 16);
	assert_false(fx->st.inverted);
	assert_string_equal(
	    row(fx, 4),
	    "[__libc_start_main 100%                                                        ]");
	assert_true(has(detail(fx), "selected: beta"));
}

/* The selection is a path: it survives rebuilds with more samples. */
static void test_selection_survives_rebuild(void **state)
{
	struct fixture *fx = *state;

	render(fx, 140, 16);
	key(fx, KEYS_DOWN, 4);
	key(fx, KEYS_RIGHT, 2);
	key(fx, KEYS_DOWN, 1);
	key(fx, KEYS_RIGHT, 1);
	render(fx, 140, 16);
	assert_true(
	    has(detail(fx), "selected: gamma_y  tree.c:56  module tree  self 10.0% (100 samples)"));
	/* a new heavy sibling path arrives, shifting every box */
	add(fx, 31, 1000, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_memcpy);
	add_known(fx, 31);
	render(fx, 140, 16);
	assert_true(
	    has(detail(fx), "selected: gamma_y  tree.c:56  module tree  self 6.7% (200 samples)"));
	assert_false(fx->st.aged_out);
	assert_string_equal(row(fx, 2), "all 100%");
}

/* When the selected path leaves the window, its nearest surviving caller
 * is selected and the screen says so; when it comes back, so does the
 * selection. */
static void test_aged_out(void **state)
{
	struct fixture *fx = *state;

	render(fx, 100, 16);
	key(fx, KEYS_DOWN, 5); /* alpha_leaf */
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: alpha_leaf"));
	/* 15 s later (10 s window): only beta */
	add(fx, 45, 300, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_beta);
	render(fx, 100, 16);
	assert_true(fx->st.aged_out);
	assert_true(has(detail(fx), "selected: worker"));
	assert_string_equal(row(fx, 2), "all 100%                                                  "
					"    ! selected path aged out of the window");
	assert_true(attr_at(fx, 3, 6) & GRID_REVERSE); /* worker's row */
	add(fx, 46, 100, 5, fx->f_start, fx->f_main, fx->f_worker, fx->f_alpha, fx->f_aleaf);
	render(fx, 100, 16);
	assert_false(fx->st.aged_out);
	assert_true(has(detail(fx), "selected: alpha_leaf"));
	/* everything gone */
	window_advance(fx->w, 100 * SEC);
	render(fx, 100, 16);
	assert_true(fx->st.aged_out);
	assert_true(has(row(fx, 8), "waiting for samples"));
	assert_true(has(detail(fx), "selected: all"));
	/* a move replaces the path: no longer aged out */
	add(fx, 101, 10, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_beta);
	render(fx, 100, 16);
	assert_true(fx->st.aged_out);
	key(fx, KEYS_DOWN, 1); /* from worker, the kept caller */
	render(fx, 100, 16);
	assert_false(fx->st.aged_out);
	assert_true(has(detail(fx), "selected: beta"));
}

/* Deep stacks scroll: the selection stays visible, the rows above it
 * scroll away. */
static void test_scroll_deep(void **state)
{
	struct fixture *fx = *state;
	uint32_t fr[40];

	fr[0] = fx->f_start;
	for (int i = 1; i < 40; i++)
		fr[i] = fx->f_main;
	assert_int_equal(window_add(fx->w, 30 * SEC, 4242, fr, 40, 5000), 0);
	fx->st.unfold_recursion = true; /* 39 rows of main */
	render(fx, 80, 14);		/* 9 icicle rows */
	key(fx, KEYS_DOWN, 30);
	render(fx, 80, 14);
	assert_true(has(detail(fx), "selected: main  tree.c:90"));
	/* selection at depth 30 on the last bar row (row 10) ... */
	assert_true(attr_at(fx, 0, 10) & GRID_REVERSE);
	assert_string_equal(row(fx, 10),
			    "[main 83.3%                                                       ]");
	/* ... and the frames deeper than the screen are announced where they
	 * fall off (issue 17: they vanished without a word), on a row of
	 * their own: drawn over the last bar, it hid the leaf (issue 24). */
	assert_string_equal(row(fx, 11), "                                                         "
					 "          v more below");
	assert_true(has(row(fx, 12), "selected: main"));
	/* At the bottom of the stack nothing is below. */
	key(fx, KEYS_DOWN, 20);
	render(fx, 80, 14);
	assert_false(has(row(fx, 11), "more below"));
	/* A short screen over the whole deep stack: the marker. */
	key(fx, KEYS_UP, 40);
	render(fx, 80, 24);
	assert_true(has(row(fx, 21), "more below"));
}

/* 13 calls of "depth" to itself over two leaves: at 80x24 one bar
 * "depth ×13" with the leaves right under it, where 13 rows of it pushed
 * them off the screen (issue 24); x shows every call again. */
static void test_fold_recursion_80x24(void **state)
{
	struct fixture *fx = *state;
	uint32_t fr[20], depth = mkframe(fx->w, 0x9000, false, "tree", "depth", "tree.c", 20);
	int n = 0;

	window_reset(fx->w);
	fr[n++] = fx->f_start;
	fr[n++] = fx->f_main;
	for (int i = 0; i < 13; i++)
		fr[n++] = depth;
	fr[n] = fx->f_aleaf;
	assert_int_equal(window_add(fx->w, 30 * SEC, 4242, fr, n + 1, 600), 0);
	fr[5] = fx->f_gx; /* depth ×3, then gamma_x */
	assert_int_equal(window_add(fx->w, 30 * SEC, 4242, fr, 6, 400), 0);
	fx->st.utf8 = true;
	render(fx, 80, 24);
	assert_true(has(row(fx, 6), "[depth \u00d713 100%    "));
	assert_true(has(row(fx, 7), "[alpha_leaf 60.0%"));
	assert_true(has(row(fx, 7), "[gamma_x 40.0%"));
	for (int y = 3; y < 22; y++)
		assert_false(strstr(row(fx, y), "more below"));
	/* x: every call its own row, the leaf 12 rows further down. */
	key(fx, 'x', 1);
	render(fx, 80, 24);
	assert_true(fx->st.unfold_recursion);
	assert_true(has(row(fx, 6), "[depth 100%"));
	assert_true(has(row(fx, 18), "[depth 60.0%"));
	assert_true(has(row(fx, 19), "[alpha_leaf 60.0%"));
	/* x again: folded. */
	key(fx, 'x', 1);
	render(fx, 80, 24);
	assert_true(has(row(fx, 7), "[alpha_leaf 60.0%"));
}

/* Enter in the top view: a leaf-only function opens bottom-up on it, a
 * caller opens top-down at its heaviest path. */
static void test_jump(void **state)
{
	struct fixture *fx = *state;

	render(fx, 100, 16);
	view_icicle_jump(&fx->st, fx->w, fx->f_gy2);
	assert_true(fx->st.inverted);
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: gamma_y  tree.c:56"));
	assert_true(has(row(fx, 2), "bottom-up: all 100%"));
	view_icicle_jump(&fx->st, fx->w, fx->f_alpha);
	assert_false(fx->st.inverted);
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: alpha  tree.c:40"));
	assert_true(attr_at(fx, 0, 7) & GRID_REVERSE);
	view_icicle_jump(&fx->st, fx->w, fx->f_futex); /* not in the window */
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: all"));
	view_icicle_jump(&fx->st, fx->w, 99999); /* no such frame: ignored */
	render(fx, 100, 16);
	/* By a copy of the frame (the top view's row): its names decide, not
	 * an id that may have aged out and gone to another frame since. */
	struct frame alpha = *frames_get(window_frames(fx->w), fx->f_alpha);
	alpha.pc = 0xdead; /* the id and pc no longer matter */
	view_icicle_jump_to(&fx->st, fx->w, &alpha);
	render(fx, 100, 16);
	assert_true(has(detail(fx), "selected: alpha  tree.c:40"));
}

/* While paused the picture stays: the tree is not rebuilt. */
static void test_paused(void **state)
{
	struct fixture *fx = *state;

	render(fx, 140, 16);
	fx->h.paused = true;
	render(fx, 140, 16);
	add(fx, 31, 1000, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_beta);
	key(fx, KEYS_DOWN, 4);
	render(fx, 140, 16);
	assert_true(has(detail(fx), "selected: alpha  tree.c:40  module tree  self 0.0% (0 "
				    "samples)  total 50.0% (500 samples)"));
	fx->h.paused = false;
	render(fx, 140, 16);
	assert_true(has(detail(fx), "total 25.0% (500 samples)"));
}

/* Colours by kind (app, lib, kernel, lock, I/O, runtime), hot frames bold,
 * 'c' colours by module; the legend on the footer. */
/* A Python function (runtime/python's frames: module its .py file) is a
 * kind of its own: app's green, in bold; native app code is not bold. */
static void test_python_colour(void **state)
{
	struct fixture *fx = *state;
	uint32_t f_py = mkframe(fx->w, 0x7f30, false, "app.py", "handler", "app.py", 3);

	window_reset(fx->w);
	/* (the selection, the leaf by default, is drawn apart: a caller) */
	add(fx, 30, 100, 4, fx->f_start, fx->f_main, f_py, fx->f_worker);
	render(fx, 100, 16);
	assert_true(has(row(fx, 6), "handler"));
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 6)), GRID_C_GREEN);
	assert_true(attr_at(fx, 1, 6) & GRID_BOLD);
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 5)), GRID_C_GREEN); /* main: app */
	assert_false(attr_at(fx, 1, 5) & GRID_BOLD);
}

static void test_colours(void **state)
{
	struct fixture *fx = *state;
	uint32_t f_malloc = mkframe(fx->w, 0x7f20, false, "libc.so.6", "malloc", NULL, 0);
	uint32_t f_kclear =
	    mkframe(fx->w, 0xffffffff81000100ull, true, "[kernel]", "clear_page", NULL, 0);

	window_reset(fx->w);
	add(fx, 30, 400, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_futex);
	add(fx, 30, 300, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_read);
	add(fx, 30, 200, 4, fx->f_start, fx->f_main, fx->f_worker, f_malloc);
	add(fx, 30, 50, 4, fx->f_start, fx->f_main, fx->f_worker, f_kclear);
	add(fx, 30, 50, 3, fx->f_start, fx->f_main, fx->f_worker);
	render(fx, 100, 16);
	assert_string_equal(row(fx, 7), "[futex_wait 40.0%                      ][__libc_read "
					"30.0%           ][malloc 20.0%      ][..e]");
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 4)), GRID_C_CYAN);  /* libc: lib */
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 5)), GRID_C_GREEN); /* main: app */
	/* A futex alone says nothing (a condvar and a mutex wait in it alike),
	 * nor does worker above it: the kernel's colour. */
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 7)), GRID_C_MAGENTA);
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 40, 7)), GRID_C_BLUE);    /* read: I/O */
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 70, 7)), GRID_C_YELLOW);  /* malloc: runtime */
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 92, 7)), GRID_C_MAGENTA); /* kernel */
	assert_true(attr_at(fx, 1, 7) & GRID_BOLD);			     /* hot: 40% self */
	assert_false(attr_at(fx, 1, 6) & GRID_BOLD);			     /* worker: 5% self */
	render(fx, 103, 16); /* the short legend needs 103 columns */
	assert_true(has(row(fx, 15), "c colour  app lib kern lock I/O rt gc")); /* short legend */
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 75, 15)), GRID_C_GREEN);
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 79, 15)), GRID_C_CYAN);
	assert_true(view_icicle_key(&fx->st, 'c').kind);
	render(fx, 100, 16);
	assert_true(fx->st.color_by_module);
	/* same module, same colour; libc differs from tree */
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 5)), GRID_COLOR_OF(attr_at(fx, 1, 6)));
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 4)), GRID_COLOR_OF(attr_at(fx, 40, 7)));
	assert_int_not_equal(GRID_COLOR_OF(attr_at(fx, 1, 4)), GRID_COLOR_OF(attr_at(fx, 1, 5)));
	assert_true(has(row(fx, 15), "colour: by module"));
}

/* Labels: long C++ names lose their parameters, then are cut from the
 * LEFT so the function's own name stays; names are sanitized. */
static void test_labels(void **state)
{
	struct fixture *fx = *state;
	uint32_t f_evil = mkframe(fx->w, 0x9000, false, "tree", "evil\x1b[2Jname", NULL, 0);

	window_reset(fx->w);
	add(fx, 30, 500, 4, fx->f_start, fx->f_main, fx->f_worker, fx->f_long);
	add(fx, 30, 500, 4, fx->f_start, fx->f_main, fx->f_worker, f_evil);
	render(fx, 80, 16);
	assert_string_equal(
	    row(fx, 7),
	    "[evil?[2Jname 50.0%                    ][..std::string const, int>>::operator[]]");
	fx->st.utf8 = true;
	render(fx, 80, 16);
	assert_string_equal(row(fx, 7), "[evil?[2Jname 50.0%                    "
					"][\xe2\x80\xa6<std::string const, int>>::operator[]]");
	key(fx, KEYS_DOWN, 4); /* evil..., first by name (equal totals) */
	key(fx, KEYS_RIGHT, 1);
	render(fx, 250, 16);
	assert_true(has(detail(fx), "selected: std::__detail::_Map_base"));
	assert_true(has(detail(fx), "if free: 2.00x faster"));
}

/* Thread narrowing (main sets tid), hidden kernel frames, one root per
 * thread ('t'). */
static void test_threads_and_kernel(void **state)
{
	struct fixture *fx = *state;
	uint32_t fr[5] = {fx->f_start, fx->f_main, fx->f_worker, fx->f_memcpy, fx->f_futex};

	assert_int_equal(window_add(fx->w, 30 * SEC, 77, fr, 5, 1000), 0);
	render(fx, 100, 16);
	assert_true(has(row(fx, 7), "[memcpy 50.0%"));
	fx->st.tid = 4242;
	render(fx, 100, 16);
	assert_string_equal(row(fx, 7), "[alpha 50.0%                                     ][beta "
					"30.0%                  ][gamma 20.0%       ]");
	fx->st.tid = 0;
	render(fx, 100, 16);
	assert_true(has(row(fx, 8), "[futex_wait 50.0%"));
	fx->st.hide_kernel = true;
	render(fx, 100, 16);
	assert_null(strstr(row(fx, 8), "futex_wait"));
	assert_true(view_icicle_key(&fx->st, 't').kind);
	render(fx, 100, 16);
	assert_string_equal(row(fx, 4), "[tid 4242 50.0%                                  ][tid 77 "
					"50.0%                                    ]");
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, 1, 4)), 0);
}

/* Wall mode: the wait pseudo frames are coloured by what they wait in. */
static void test_wait_colours(void **state)
{
	struct fixture *fx = *state;
	int64_t lock = frames_wait(window_frames_mut(fx->w), SAMPLE_WAIT_LOCK);
	int64_t nap = frames_wait(window_frames_mut(fx->w), SAMPLE_WAIT_SLEEP);

	assert_true(lock >= 0 && nap >= 0);
	window_reset(fx->w);
	add(fx, 30, 600, 3, fx->f_start, fx->f_main, (uint32_t)lock);
	add(fx, 30, 400, 3, fx->f_start, fx->f_main, (uint32_t)nap);
	render(fx, 120, 30);
	int yl = -1, xl = -1, ys = -1, xs = -1;
	for (int y = 0; y < 30; y++) {
		const char *r = row(fx, y);
		const char *p;
		if ((p = strstr(r, "[[lock]")) && yl < 0) {
			yl = y;
			xl = (int)(p - r) + 1;
		}
		if ((p = strstr(r, "[[sleep]")) && ys < 0) {
			ys = y;
			xs = (int)(p - r) + 1;
		}
	}
	assert_true(yl >= 0 && ys >= 0);
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, xl, yl)), GRID_C_RED);
	assert_int_equal(GRID_COLOR_OF(attr_at(fx, xs, ys)), GRID_C_WHITE);
}

/* The colour of the first box whose label starts with label; -1 if none. */
static int colour_of_box(struct fixture *fx, const char *label)
{
	char want[128];

	snprintf(want, sizeof(want), "[%s", label);
	for (int y = 0; y < fx->g.h; y++) {
		const char *r = row(fx, y), *p = strstr(r, want);

		if (p)
			return GRID_COLOR_OF(attr_at(fx, (int)(p - r) + 1, y));
	}
	printf("no box '%s'\n", want);
	return -1;
}

/* One word for one wait (issue 21): a condition variable's wait, its futex
 * and wall mode's [idle] under it are a wait for work (white), never lock
 * (red); a mutex's futex is lock, as its caller is. Go's GC has its own colour. */
static void test_condvar_not_lock(void **state)
{
	struct fixture *fx = *state;
	struct window *w = fx->w;
	uint32_t cond = mkframe(w, 0x7f30, false, "libc.so.6", "___pthread_cond_wait", NULL, 0);
	uint32_t fxw =
	    mkframe(w, 0x7f38, false, "libc.so.6", "__futex_abstimed_wait_common", NULL, 0);
	uint32_t mtx = mkframe(w, 0x7f40, false, "libc.so.6", "___pthread_mutex_lock", NULL, 0);
	uint32_t lll = mkframe(w, 0x7f48, false, "libc.so.6", "__lll_lock_wait", NULL, 0);
	uint32_t kfx =
	    mkframe(w, 0xffffffff81000200ull, true, "[kernel]", "futex_wait_queue", NULL, 0);
	uint32_t gc = mkframe(w, 0x9000, false, "gosrv", "runtime.gcBgMarkWorker", NULL, 0);
	int64_t idle = frames_wait(window_frames_mut(w), SAMPLE_WAIT_IDLE);

	assert_true(idle >= 0);
	window_reset(w);
	add(fx, 30, 400, 5, fx->f_start, fx->f_main, cond, fxw, (uint32_t)idle);
	add(fx, 30, 400, 5, fx->f_start, fx->f_main, mtx, lll, kfx);
	add(fx, 30, 200, 3, fx->f_start, fx->f_main, gc);
	render(fx, 160, 30);
	assert_int_equal(colour_of_box(fx, "___pthread_cond_wait"), GRID_C_WHITE);
	assert_int_equal(colour_of_box(fx, "__futex_abstimed_wait_common"), GRID_C_WHITE);
	assert_int_equal(colour_of_box(fx, "[idle]"), GRID_C_WHITE);
	assert_int_equal(colour_of_box(fx, "___pthread_mutex_lock"), GRID_C_RED);
	assert_int_equal(colour_of_box(fx, "__lll_lock_wait"), GRID_C_RED);
	assert_int_equal(colour_of_box(fx, "futex_wait_queue"), GRID_C_RED);
	assert_int_equal(colour_of_box(fx, "runtime.gcBgMarkWorker"), GRID_C_GC);
	/* Bottom-up, a parent is a callee: the futex keeps its own colour. */
	assert_true(view_icicle_key(&fx->st, 'f').kind);
	render(fx, 160, 30);
	assert_int_equal(colour_of_box(fx, "futex_wait_queue"), GRID_C_MAGENTA);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_wait_colours, setup, teardown),
	    T(test_render_80x24),
	    T(test_condvar_not_lock),
	    T(test_render_120),
	    T(test_too_small),
	    T(test_detail_long_name),
	    T(test_keys_move),
	    T(test_keys_zoom),
	    T(test_breadcrumb_cut),
	    T(test_search),
	    T(test_search_substring_and_once_per_stack),
	    T(test_invert),
	    T(test_selection_survives_rebuild),
	    T(test_aged_out),
	    T(test_scroll_deep),
	    T(test_jump),
	    T(test_fold_recursion_80x24),
	    T(test_paused),
	    T(test_colours),
	    T(test_python_colour),
	    T(test_labels),
	    T(test_threads_and_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
