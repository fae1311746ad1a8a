/* Unit tests for view_top (and the shared header/help/footer from view):
 * a window with known samples and fake symbols is rendered into grids of
 * several sizes and compared as text, line by line. Set VIEW_TOP_DUMP=1 to
 * print the rendered grids. */
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

#include "runner.h"

#include "fixture.h"

#include "stacktop/ui/keys.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/ui/ui.h"
#include "stacktop/ui/view_top.h"

#define SEC FIXTURE_SEC

/* The fixture's frames: file:line given or not, an offset for a frame with
 * no function; samples at t = 30 s. */
#define mkframe(w, pc, kernel, mod, func, file, line, off)                                         \
	fixture_frame(w, pc, kernel, mod, func, file, line, off)
#define add(fx, tid, count, ...) fixture_add((fx)->w, 30, tid, count, __VA_ARGS__)

struct fixture {
	struct window *w;
	struct view_header h;
	struct view_top_state st;
	struct grid g;
	uint32_t f_main, f_handle, f_parse, f_decode, f_memmove, f_kcopy, f_anon, f_evil;
};

/* 1000 samples at 100 Hz (10 s of CPU):
 *   main;handle;parse                 589  (tid 4242)
 *   main;handle;parse;decode          150  (tid 4250)
 *   main;handle;decode                 60  (tid 4250)
 *   main;handle;memmove                97
 *   main;handle;memmove;kcopy [k]      50
 *   main;anon                          50
 *   main;handle                         4  */
static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fixture_open(fx, 60, &fx->w) < 0)
		return -1;
	fx->f_main = mkframe(fx->w, 0x1000, false, "server", "main", "server.c", 50, 0);
	fx->f_handle = mkframe(fx->w, 0x2000, false, "server", "handle_request", "server.c", 88, 0);
	fx->f_parse = mkframe(fx->w, 0x3000, false, "server", "parse_row", "parser.c", 212, 0);
	fx->f_decode = mkframe(fx->w, 0x4000, false, "server", "decode_field", "parser.c", 140, 0);
	fx->f_memmove = mkframe(fx->w, 0x7f0000, false, "libc.so.6", "__memmove_avx_unaligned_erms",
				NULL, 0, 0);
	fx->f_kcopy = mkframe(fx->w, 0xffffffff81000000ull, true, "[kernel]", "copy_user_generic",
			      NULL, 0, 0);
	fx->f_anon = mkframe(fx->w, 0x7f1a2b, false, "libfoo.so", NULL, NULL, 0, 0x1a2b);
	fx->f_evil = mkframe(fx->w, 0x9000, false, "server", "evil\x1b[2Jname", NULL, 0, 0);

	add(fx, 4242, 589, 3, fx->f_main, fx->f_handle, fx->f_parse);
	add(fx, 4250, 150, 4, fx->f_main, fx->f_handle, fx->f_parse, fx->f_decode);
	add(fx, 4250, 60, 3, fx->f_main, fx->f_handle, fx->f_decode);
	add(fx, 4242, 97, 3, fx->f_main, fx->f_handle, fx->f_memmove);
	add(fx, 4242, 50, 4, fx->f_main, fx->f_handle, fx->f_memmove, fx->f_kcopy);
	add(fx, 4242, 50, 2, fx->f_main, fx->f_anon);
	add(fx, 4242, 4, 2, fx->f_main, fx->f_handle);

	fx->h = FIXTURE_HEADER(.cmdline = "./server --port 8080", .nthreads = 7, .rate_hz = 99,
			       .achieved_hz = 98.9, .samples_window = 1000, .samples_total = 35412,
			       .window_s = 60, .span_s = 60);
	fx->h.unwind_truncated = 12;
	fx->st = (struct view_top_state){.period_s = 0.01};
	return fixture_ready(state, fx, &fx->g);
}

FIXTURE_TEARDOWN(view_top_state_free)

static void render(struct fixture *fx, int w, int h)
{
	fixture_render(fx, w, h, view_top_update(&fx->st, fx->w, &fx->h, w, h),
		       view_top_render(&fx->g, &fx->h, &fx->st), "VIEW_TOP_DUMP");
}

/* Drawn 80x24, screen row y reads want. */
static void shows(struct fixture *fx, int y, const char *want)
{
	render(fx, 80, 24);
	assert_string_equal(row(fx, y), want);
}

/* By line (on) or by function, in the view and its header alike. */
static void by_line(struct fixture *fx, bool on)
{
	fx->st.lines = on;
	fx->h.lines = on;
}

/* The kernel's frames hidden (on) or shown, in the view and its header
 * alike. */
static void hide_kernel(struct fixture *fx, bool on)
{
	fx->st.hide_kernel = on;
	fx->h.hide_kernel = on;
}

/* The header's second row (its counters), fx drawn width columns wide. */
static const char *counters_at(struct fixture *fx, int width)
{
	render(fx, width, 24);
	return row(fx, 1);
}

static void test_80x24(void **state)
{
	struct fixture *fx = *state;

	render(fx, 80, 24);
	assert_rows(
	    fx, 0,
	    "stacktop  pid 4242  ./server --port 8080        cpu 99 Hz  7 threads  window 60s",
	    "samples 1,000 in 60s (16.7/s)  lost 0  unwind ok 99.9% (truncated 12, failed 0)",
	    " %Own  %Total  OwnTime  TotalTime  Function (file)                Module",
	    " 58.9    73.9     5.9s       7.4s  parse_row (parser.c)           server",
	    " 21.0    21.0     2.1s       2.1s  decode_field (parser.c)        server",
	    "  9.7    14.7     1.0s       1.5s  __memmove_avx_unaligned_erms   libc.so.6",
	    /* Equal counts: ordered by name (an unnamed frame first), stably. */
	    "  5.0     5.0     0.5s       0.5s  libfoo.so+0x1a2b               libfoo.so",
	    "  5.0     5.0     0.5s       0.5s  copy_user_generic [k]          [kernel]",
	    "  0.4    95.0     0.0s       9.5s  handle_request (server.c)      server",
	    "  0.0   100.0     0.0s      10.0s  main (server.c)                server");
	assert_blank(fx, 10, 22);
	assert_string_equal(row(fx, 23),
			    " 1 top  2 icicle  3 threads  s sort  L lines  space pause  "
			    "? help  q quit");
	/* Attributes: header colour on the column header and footer, the
	 * sorted column bold+underlined, the selection reversed. */
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 40, 2)->attr), GRID_C_HEADER);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 79, 23)->attr), GRID_C_HEADER);
	assert_true(grid_at(&fx->g, 1, 2)->attr & GRID_BOLD);
	assert_true(grid_at(&fx->g, 1, 2)->attr & GRID_UNDERLINE);
	assert_false(grid_at(&fx->g, 8, 2)->attr & GRID_BOLD);
	assert_true(grid_at(&fx->g, 0, 3)->attr & GRID_REVERSE);
	assert_true(grid_at(&fx->g, 79, 3)->attr & GRID_REVERSE);
	assert_false(row_has_attr(fx, 4, GRID_REVERSE));
	assert_int_equal(fx->st.selected_frame, fx->f_parse);
	assert_int_equal(fx->st.nrows, 7);
	assert_int_equal(fx->st.page, 20);
}

static void test_200x60(void **state)
{
	struct fixture *fx = *state;
	char want[256];

	fx->h.cmdline = "/usr/local/bin/server --port 8080 --workers 16";
	render(fx, 200, 60);
	snprintf(want, sizeof(want), "%-168s%s",
		 "stacktop  pid 4242  /usr/local/bin/server --port 8080 --workers 16",
		 "cpu 99 Hz  7 threads  window 60s");
	assert_string_equal(row(fx, 0), want);
	assert_string_equal(row(fx, 1), "samples 1,000 in 60s (16.7/s)  lost 0  "
					"unwind ok 99.9% (truncated 12, failed 0)");
	/* At 80 columns the program's name stays; its directories go
	 * (issue 17: the command was cut to a path prefix). */
	fx->h.cmdline = "/usr/local/lib/very/long/install/prefix/bin/server --port 8080";
	shows(fx, 0,
	      "stacktop  pid 4242  server --port 8080          cpu 99 Hz  7 "
	      "threads  window 60s");
	render(fx, 200, 60);
	snprintf(want, sizeof(want), "%-35s%-102s%s", " %Own  %Total  OwnTime  TotalTime",
		 "Function (file)", "Module");
	/* The numeric header has two spaces before Function. */
	snprintf(want, sizeof(want), " %%Own  %%Total  OwnTime  TotalTime  %-102s%s",
		 "Function (file)", "Module");
	assert_string_equal(row(fx, 2), want);
	snprintf(want, sizeof(want), " 58.9    73.9     5.9s       7.4s  %-102s%s",
		 "parse_row (parser.c)", "server");
	assert_string_equal(row(fx, 3), want);
	snprintf(want, sizeof(want), "  9.7    14.7     1.0s       1.5s  %-102s%s",
		 "__memmove_avx_unaligned_erms", "libc.so.6");
	assert_string_equal(row(fx, 5), want);
	assert_blank(fx, 10, 58);
	assert_int_equal(fx->st.page, 56);
}

static const char *func_col(struct fixture *fx, int y)
{
	static char buf[256];
	const char *r = row(fx, y);
	size_t n;

	if (strlen(r) < 35)
		return "";
	snprintf(buf, sizeof(buf), "%s", r + 35);
	n = strcspn(buf, " ");
	buf[n] = 0;
	return buf;
}

static void test_sorting(void **state)
{
	struct fixture *fx = *state;
	static const char *const by_self[] = {"parse_row",
					      "decode_field",
					      "__memmove_avx_unaligned_erms",
					      "libfoo.so+0x1a2b",
					      "copy_user_generic",
					      "handle_request",
					      "main"};
	static const char *const by_total[] = {"main",
					       "handle_request",
					       "parse_row",
					       "decode_field",
					       "__memmove_avx_unaligned_erms",
					       "libfoo.so+0x1a2b",
					       "copy_user_generic"};
	static const int label_x[] = {1, 7, 15, 24};

	for (int s = 0; s < 4; s++) {
		const char *const *want = (s == 0 || s == 2) ? by_self : by_total;

		fx->st.sort = (enum sort_key)s;
		render(fx, 80, 24);
		for (int i = 0; i < 7; i++)
			assert_string_equal(func_col(fx, 3 + i), want[i]);
		for (int k = 0; k < 4; k++)
			assert_int_equal(!!(grid_at(&fx->g, label_x[k], 2)->attr & GRID_UNDERLINE),
					 k == s);
	}
	/* The same order twice: ties do not flip between refreshes. */
	render(fx, 80, 24);
	assert_string_equal(func_col(fx, 8), "libfoo.so+0x1a2b");

	enum sort_key so;
	assert_int_equal(sort_parse("totaltime", &so), 0);
	assert_int_equal(so, SORT_TOTALTIME);
	assert_int_equal(sort_parse("own", &so), 0);
	assert_int_equal(so, SORT_OWN);
	assert_int_equal(sort_parse("bogus", &so), -EINVAL);
}

static void test_lines_and_kernel(void **state)
{
	struct fixture *fx = *state;
	uint32_t p2 = mkframe(fx->w, 0x3010, false, "server", "parse_row", "parser.c", 215, 0);

	add(fx, 4242, 100, 3, fx->f_main, fx->f_handle, p2);
	by_line(fx, true);
	fx->h.samples_window = 1100;
	render(fx, 80, 24);
	assert_rows(
	    fx, 1,
	    "samples 1,100 in 60s (18.3/s)  lost 0  unwind ok 99.9%                 [by line]",
	    " %Own  %Total  OwnTime  TotalTime  Function (file:line)           Module",
	    " 53.5    67.2     5.9s       7.4s  parse_row (parser.c:212)       server");
	assert_string_equal(row(fx, 5),
			    "  9.1     9.1     1.0s       1.0s  parse_row (parser.c:215)"
			    "       server");
	/* Function mode merges the two lines of parse_row. */
	by_line(fx, false);
	shows(fx, 3,
	      " 62.6    76.3     6.9s       8.4s  parse_row (parser.c)"
	      "           server");
	/* Hiding kernel frames moves their self time to the user leaf. */
	hide_kernel(fx, true);
	shows(fx, 1,
	      "samples 1,100 in 60s (18.3/s)  lost 0  "
	      "unwind ok 99.9%           [kernel hidden]");
	assert_string_equal(row(fx, 5), " 13.4    13.4     1.5s       1.5s  "
					"__memmove_avx_unaligned_erms   libc.so.6");
	for (int y = 3; y < 23; y++)
		assert_null(strstr(row(fx, y), "[k]"));
}

static void test_thread_filter(void **state)
{
	struct fixture *fx = *state;

	fx->st.tid = 4250;
	fx->h.filter_tid = 4250;
	fx->h.filter_name = "worker";
	render(fx, 80, 24);
	assert_rows(
	    fx, 1,
	    "samples 1,000 in 60s (16.7/s)  lost 0  unwind ok 99.9%        thread 4250 worker",
	    /* tid 4250 ran parse;decode 150 times and decode alone 60 times. */
	    ANY_ROW, "100.0   100.0     2.1s       2.1s  decode_field (parser.c)        server",
	    "  0.0   100.0     0.0s       2.1s  handle_request (server.c)      server");
	assert_string_equal(func_col(fx, 5), "main");
	assert_string_equal(row(fx, 6), "  0.0    71.4     0.0s       1.5s  parse_row (parser.c)"
					"           server");
	assert_string_equal(row(fx, 7), "");
}

static void test_batch_limit(void **state)
{
	struct fixture *fx = *state;

	fx->st.batch = true;
	fx->st.limit = 3;
	fx->st.selected = 2;
	render(fx, 200, 10);
	/* Batch text: Module follows the longest function shown. */
	assert_rows(
	    fx, 2, " %Own  %Total  OwnTime  TotalTime  Function (file)               Module",
	    " 58.9    73.9     5.9s       7.4s  parse_row (parser.c)          server", ANY_ROW,
	    "  9.7    14.7     1.0s       1.5s  __memmove_avx_unaligned_erms  libc.so.6");
	assert_string_equal(func_col(fx, 5), "__memmove_avx_unaligned_erms");
	assert_blank(fx, 6, 9); /* limit rows, and no footer */
	for (int y = 0; y < 10; y++)
		assert_false(row_has_attr(fx, y, GRID_REVERSE));
	assert_int_equal(fx->st.page, 3);
	/* limit 0: as many rows as fit. */
	fx->st.limit = 0;
	render(fx, 200, 8);
	assert_string_equal(func_col(fx, 7), "copy_user_generic");
	/* Batch output is not subject to the terminal minimum. */
	render(fx, 50, 8);
	assert_string_equal(func_col(fx, 3), "parse_row");
}

static void test_too_small(void **state)
{
	struct fixture *fx = *state;

	render(fx, 40, 10);
	for (int y = 0; y < 10; y++)
		assert_string_equal(row(fx, y),
				    y == 5 ? " terminal too small: 40x10 (need 60x12)" : "");
	render(fx, 59, 30);
	assert_string_equal(row(fx, 15), "          terminal too small: 59x30 (need 60x12)");
	render(fx, 120, 11);
	assert_non_null(strstr(row(fx, 5), "terminal too small: 120x11"));
	assert_string_equal(row(fx, 0), "");
	render(fx, 60, 12);
	assert_string_equal(func_col(fx, 3), "parse_row");
}

/* The third line for each cause of SAMPLING_BEHIND at 120 of 400 samples/s. */
static const char *const behind_lines[] = {
    [VIEW_BEHIND_UNKNOWN] = "! 120 of 400 samples/s",
    [VIEW_BEHIND_KERNEL] =
	"! 120 of 400 samples/s: kernel time is unseen without CAP_PERFMON or root",
    [VIEW_BEHIND_SHORT_THREADS] =
	"! 120 of 400 samples/s: CPU is in threads that exit before they are attached",
    [VIEW_BEHIND_SLOW] =
	"! 120 of 400 samples/s: stacktop cannot keep up; lower --rate or --stack-size",
};

static void test_selection(void **state)
{
	struct fixture *fx = *state;

	/* 8 rows; at 80x12 with a status line: 3 header lines, the column
	 * header and the footer leave a 7-row page. */
	add(fx, 4242, 1, 2, fx->f_main, fx->f_evil);
	fx->h.status = "window reset";
	fx->st.selected = 100;
	render(fx, 80, 12);
	assert_string_equal(row(fx, 2), "window reset");
	assert_int_equal(fx->st.nrows, 8);
	assert_int_equal(fx->st.page, 7);
	assert_int_equal(fx->st.selected, 7);
	assert_int_equal(fx->st.scroll, 1);
	assert_int_equal(fx->st.selected_frame, fx->f_main);
	assert_string_equal(func_col(fx, 4), "decode_field");
	assert_string_equal(func_col(fx, 10), "main");
	assert_true(row_has_attr(fx, 10, GRID_REVERSE));
	assert_false(row_has_attr(fx, 9, GRID_REVERSE));
	/* Up past the top: clamped, and the view scrolls back. */
	fx->st.selected = -5;
	render(fx, 80, 12);
	assert_int_equal(fx->st.selected, 0);
	assert_int_equal(fx->st.scroll, 0);
	assert_true(row_has_attr(fx, 4, GRID_REVERSE));
	assert_int_equal(fx->st.selected_frame, fx->f_parse);
	/* Moving inside the page does not scroll. */
	fx->st.selected = 6;
	render(fx, 80, 12);
	assert_int_equal(fx->st.scroll, 0);
	assert_true(row_has_attr(fx, 10, GRID_REVERSE));
	/* A stale scroll beyond the end is pulled back. */
	fx->st.selected = 7;
	fx->st.scroll = 50;
	render(fx, 80, 12);
	assert_int_equal(fx->st.scroll, 1);
	/* A taller screen shows everything from the top. */
	render(fx, 80, 24);
	assert_int_equal(fx->st.scroll, 0);
	assert_int_equal(fx->st.selected, 7);
	/* Warnings and the exit notice take the third line too. */
	fx->h.warning = VIEW_WARNING_SAMPLING_BEHIND;
	fx->h.warn_hz = 120;
	fx->h.warn_expected_hz = 400;
	/* The advice follows the cause: "lower --rate" only when stacktop is
	 * the one too slow (issue 17: it was said whatever the cause). */
	assert_int_equal(fx->h.warn_cause, VIEW_BEHIND_UNKNOWN);
	for (int c = VIEW_BEHIND_UNKNOWN; c <= VIEW_BEHIND_SLOW; c++) {
		fx->h.warn_cause = (enum view_behind_cause)c;
		render(fx, 80, 12);
		assert_string_equal(row(fx, 2), behind_lines[c]);
	}
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 0, 2)->attr), GRID_C_YELLOW);
	fx->h.exited = true;
	fx->h.exit_text = "target exited with status 0";
	render(fx, 80, 12);
	assert_string_equal(row(fx, 2), "target exited with status 0 \u2014 showing the last data; "
					"q quits");
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 70, 2)->attr), GRID_C_ALERT);
}

static void test_sanitized(void **state)
{
	struct fixture *fx = *state;

	add(fx, 4242, 5000, 2, fx->f_main, fx->f_evil);
	fx->h.cmdline = "./srv\x1b]0;pwned\x07 --x";
	shows(fx, 0,
	      "stacktop  pid 4242  ./srv?]0;pwned? --x         "
	      "cpu 99 Hz  7 threads  window 60s");
	assert_string_equal(func_col(fx, 3), "evil?[2Jname");
	for (int y = 0; y < 24; y++)
		for (int x = 0; x < 80; x++) {
			wchar_t ch = grid_at(&fx->g, x, y)->ch;
			assert_true(ch == GRID_CONT || (ch >= 0x20 && ch != 0x7f));
		}
}

static void test_long_names(void **state)
{
	struct fixture *fx = *state;
	uint32_t f = mkframe(fx->w, 0x5000, false, "libverylongmodulename.so.1.2.3",
			     "std::vector<std::pair<int, std::string>>::_M_realloc_insert",
			     "stl_vector.h", 1287, 0);

	add(fx, 4242, 5000, 2, fx->f_main, f);
	fx->st.lines = true;
	render(fx, 80, 24);
	/* The name is cut, the location kept, the module cut to its column. */
	assert_string_equal(row(fx, 3), " 83.3    83.3    50.0s      50.0s  std::vec"
					"\u2026 (stl_vector.h:1287)  libverylongmo\u2026");
	render(fx, 200, 24);
	assert_non_null(strstr(row(fx, 3), "std::vector<std::pair<int, std::string>>::"
					   "_M_realloc_insert (stl_vector.h:1287)"));
	/* By function, the bare file name goes before any of the name does. */
	fx->st.lines = false;
	shows(fx, 3,
	      " 83.3    83.3    50.0s      50.0s  std::vector<std::pair<i"
	      "nt, s\u2026  libverylongmo\u2026");
	uint32_t g = mkframe(fx->w, 0x6000, false, "libc.so.6", "__libc_start_call_main",
			     "libc_start_call_main.h", 58, 0);
	window_reset(fx->w);
	add(fx, 4242, 5000, 2, fx->f_main, g);
	render(fx, 80, 24);
	assert_string_equal(func_col(fx, 3), "__libc_start_call_main");
	assert_non_null(strstr(row(fx, 4), "main (server.c)"));
}

/* C++ names short by default: no return type, no parameters, so at 80
 * columns the function's own name shows; whole with full_names (key v,
 * --full-names), as the demangler gave them (issue 24). */
static void test_cxx_short_names(void **state)
{
	struct fixture *fx = *state;
	uint32_t f = mkframe(fx->w, 0x5000, false, "cxxnames",
			     "long shop::Basket<long>::total_of(std::__cxx11::basic_string<char, "
			     "std::char_traits<char>, std::allocator<char> > const&, int) const",
			     "cxxnames.cpp", 30, 0);

	window_reset(fx->w);
	add(fx, 4242, 5000, 2, fx->f_main, f);
	shows(fx, 3,
	      "100.0   100.0    50.0s      50.0s  shop::Basket<long>::total_of"
	      "   cxxnames");
	fx->st.full_names = true;
	render(fx, 80, 24);
	assert_non_null(strstr(row(fx, 3), "50.0s  long shop::Basket<long>::tot\u2026  cxxnames"));
}

static void test_empty(void **state)
{
	struct fixture *fx = *state;

	window_reset(fx->w);
	fx->h.samples_window = 0;
	shows(fx, 3, "                              waiting for samples\u2026");
	assert_blank(fx, 4, 22);
	assert_int_equal(fx->st.nrows, 0);
	assert_int_equal(fx->st.selected, 0);
	assert_int_equal(fx->st.selected_frame, UINT32_MAX);

	/* Seconds in and still nothing: say why, and what would see more. */
	struct metrics m;
	struct metrics_config mc;
	metrics_config_default(&mc);
	assert_int_equal(metrics_init(&m, 0, &mc), 0);
	for (int i = 0; i < 5; i++)
		metrics_push_process(&m, i, 0, 1 << 20, 0, 0);
	metrics_eval(&m, 4);
	fx->st.metrics = &m;
	fx->st.charts = false;
	shows(fx, 3,
	      "     no samples: nothing ran on a CPU; wall mode (-w) sees "
	      "waiting threads");
	/* ... unless the children burn: a master whose workers do the work. */
	fx->h.children_busy = true;
	shows(fx, 3,
	      "     no samples: nothing ran on a CPU; its children do: try "
	      "--subprocesses");
	fx->h.children_busy = false;
	fx->st.metrics = NULL;
	metrics_free(&m);
}

/* The rate shown agrees with the count beside it, and "expected" appears
 * only when samples fall short (issue 17 item 7: "samples 9 in 18s
 * (0.0/s)", "141.8/s of 125/s expected"). */
static void test_header_rates_agree(void **state)
{
	struct fixture *fx = *state;

	fx->h.samples_window = 9;
	fx->h.span_s = 18;
	fx->h.achieved_hz = 0;
	render(fx, 80, 24);
	assert_true(!strncmp(row(fx, 1), "samples 9 in 18s (0.5/s)", 24));
	fx->h.samples_window = 2552;
	fx->h.achieved_hz = 141.8;
	fx->h.expected_hz = 125;
	render(fx, 80, 24);
	assert_true(!strncmp(row(fx, 1), "samples 2,552 in 18s (141.8/s)  lost 0", 38));
	assert_null(strstr(row(fx, 1), "expected"));
	fx->h.achieved_hz = 40;
	render(fx, 80, 24);
	assert_true(
	    !strncmp(row(fx, 1), "samples 2,552 in 18s (now 40.0/s of 125/s expected)", 51));
}

static void test_header_variants(void **state)
{
	struct fixture *fx = *state;
	static const int pids[] = {4242, 4243, 4300, 4301, 4302};

	fx->h.npids = 5;
	fx->h.pids = pids;
	fx->h.paused = true;
	fx->h.nthreads = 1;
	fx->h.rate_hz = 997.5;
	render(fx, 100, 24);
	assert_string_equal(row(fx, 0), "stacktop  pids 4242,4243,4300 (+2)  ./server --port 8080"
					"            cpu 998 Hz  1 thread  window 60s");
	assert_string_equal(row(fx, 1),
			    "samples 1,000 in 60s (16.7/s)  lost 0  "
			    "unwind ok 99.9% (truncated 12, failed 0)             [PAUSED]");
	assert_true(grid_at(&fx->g, 92, 1)->attr & GRID_REVERSE);
	assert_true(grid_at(&fx->g, 99, 1)->attr & GRID_BOLD);
	assert_false(grid_at(&fx->g, 91, 1)->attr & GRID_REVERSE);
	fx->h.pids = NULL;
	fx->h.npids = 2;
	fx->h.rate_hz = 19.5;
	fx->h.mode = "wall";
	fx->h.samples_total = 0;
	render(fx, 100, 24);
	assert_non_null(strstr(row(fx, 0), "stacktop  pids 4242 (+1)  ./server"));
	assert_non_null(strstr(row(fx, 0), "wall 19.5 Hz  1 thread  window 60s"));
	assert_non_null(strstr(row(fx, 1), "unwind ok -"));

	/* A saved profile: no rolling window, and its "exit" is no alarm. */
	fx->h.mode = "cpu";
	fx->h.paused = false;
	fx->h.npids = 1;
	fx->h.source = "/tmp/x.pb.gz";
	fx->h.span_s = 3;
	fx->h.samples_total = 1000;
	fx->h.exited = true;
	fx->h.exit_text = "saved cpu profile, 183 samples";
	render(fx, 80, 24);
	assert_rows(
	    fx, 0,
	    "stacktop  report  /tmp/x.pb.gz                             cpu 19.5 Hz  1 thread",
	    /* A saved profile: nothing lost or unwound here (issue 17). */
	    "samples 1,000 over 3s", "saved cpu profile, 183 samples \u2014 q quits");
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 0, 2)->attr), GRID_C_CYAN);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 70, 2)->attr), GRID_C_DEFAULT);
	/* A folded file: no rate, no duration, counts instead of times, no
	 * module to show. */
	fx->h.rate_hz = 0;
	fx->h.span_s = 0;
	fx->st.period_s = 0;
	render(fx, 80, 24);
	assert_rows(
	    fx, 0,
	    "stacktop  report  /tmp/x.pb.gz                                     cpu  1 thread",
	    "samples 1,000");
	const char *r3 = row(fx, 3);
	assert_true(strstr(r3, " %Own  %Total  OwnSamp  TotalSamp") == r3);
	assert_null(strstr(row(fx, 4), "0.0s"));
}

/* Threads that could not be sampled are counted, with the reason, right
 * after the samples (the existing words stay, less important ones go). */
static void test_header_unsampled(void **state)
{
	struct fixture *fx = *state;

	fx->h.threads_unsampled = 3;
	fx->h.unsampled_err = -EMFILE;
	assert_string_equal(counters_at(fx, 140),
			    "samples 1,000 in 60s (16.7/s)  3 threads not sampled: too many open "
			    "files  lost 0  unwind ok 99.9% (truncated 12, failed 0)");
	fx->h.threads_unsampled = 1;
	fx->h.unsampled_err = -EPERM;
	assert_string_equal(counters_at(fx, 80),
			    "samples 1,000 in 60s (16.7/s)  1 thread not sampled: "
			    "no permission  lost 0");
	fx->h.unsampled_err = -EBUSY;
	assert_non_null(
	    strstr(counters_at(fx, 120), "  1 thread not sampled: traced by another process  "));
	fx->h.unsampled_err = -EIO;
	assert_non_null(
	    strstr(counters_at(fx, 120), "  1 thread not sampled: input/output error  "));
	fx->h.threads_unsampled = 0;
	assert_null(strstr(counters_at(fx, 120), "not sampled"));
	/* Hostile files the symbolizer would not open. */
	fx->h.files_refused = 2;
	assert_string_equal(counters_at(fx, 140),
			    "samples 1,000 in 60s (16.7/s)  2 files refused (not regular "
			    "or too big)  lost 0  unwind ok 99.9% (truncated 12, failed 0)");
}

/* Stacks libunwind finished past the rule cache, and --debuginfod's
 * progress: in the unwind detail, and a field of their own. */
static void test_header_symbols(void **state)
{
	struct fixture *fx = *state;

	fx->h.unwind_cache_stopped = 40;
	fx->h.unwind_finished = 38;
	assert_string_equal(counters_at(fx, 140),
			    "samples 1,000 in 60s (16.7/s)  lost 0  unwind ok 99.9% "
			    "(truncated 12, failed 0, libunwind finished 38 of 40)");
	fx->h.dbg_on = true;
	fx->h.dbg_pending = 2;
	assert_string_equal(counters_at(fx, 160),
			    "samples 1,000 in 60s (16.7/s)  lost 0  unwind ok 99.9% "
			    "(truncated 12, failed 0, libunwind finished 38 of 40)  "
			    "debuginfod: 2 pending");
	fx->h.dbg_pending = 0;
	fx->h.dbg_found = 3;
	fx->h.dbg_missing = 1;
	assert_non_null(strstr(counters_at(fx, 160), "  debuginfod: 3 fetched, 1 not found"));
	fx->h.dbg_missing = 0;
	assert_non_null(strstr(counters_at(fx, 160), "  debuginfod: 3 fetched"));
	fx->h.dbg_found = 0;
	assert_non_null(strstr(counters_at(fx, 160), "  debuginfod: nothing missing"));
	/* Narrow: whole fields only, the unwind detail goes first. */
	fx->h.dbg_pending = 2;
	assert_null(strstr(counters_at(fx, 80), "libunwind"));
	fx->h.dbg_on = false;
	assert_null(strstr(counters_at(fx, 160), "debuginfod"));
}

/* The help screen, w x h, with the symbol sources mods[0..nmods), as text
 * in all (8 KiB): its rows, each ended by a newline. */
static void help_text(struct fixture *fx, int w, int h, const struct sym_module_note *mods,
		      size_t nmods, char *all)
{
	const struct keymap *const *tables;
	const struct keymap *maps[16];
	size_t nall = ui_keymaps(&tables), nmaps = 0;

	/* as ui draws it for one target: no process table */
	for (size_t i = 0; i < nall; i++)
		if (tables[i] != &view_procs_keymap)
			maps[nmaps++] = tables[i];
	grid_resize(&fx->g, w, h);
	view_help_render(&fx->g, maps, nmaps, mods, nmods);
	all[0] = '\0';
	for (int y = 0; y < h; y++) {
		strcat(all, row(fx, y));
		strcat(all, "\n");
	}
}

static void test_help(void **state)
{
	struct fixture *fx = *state;
	char all[8192];

	help_text(fx, 80, 24, NULL, 0, all);
	assert_string_equal(row(fx, 0), " stacktop help  (man stacktop for more)");
	/* Every key of every view is listed, with what it does. */
	assert_non_null(strstr(all, " 1-4 0 Tab  top icicle threads memory"));
	assert_non_null(strstr(all, " L  v       file:line; whole C++ names"));
	assert_non_null(strstr(all, " K          show or hide kernel frames"));
	assert_non_null(strstr(all, " g          show or hide the charts"));
	assert_non_null(strstr(all, " b  B  D    baseline 10 s; clear; diff"));
	assert_non_null(strstr(all, " space      freeze (sampling goes on)"));
	assert_non_null(strstr(all, " R          reset: drop all samples"));
	assert_non_null(strstr(all, " w          write the window to a file"));
	assert_non_null(strstr(all, " i          wall: idle threads on/off"));
	assert_non_null(strstr(all, " ?  q       this help; quit (or Ctrl-C)"));
	assert_non_null(strstr(all, " s >  S <   sort by next / prev column"));
	assert_non_null(strstr(all, "PgUp/Dn move selection"));
	assert_non_null(strstr(all, " /  n  N    search; next/prev match"));
	assert_non_null(strstr(all, " f  c  t    bottom-up; colour; threads"));
	assert_non_null(strstr(all, " x          fold / unfold recursion"));
	assert_non_null(strstr(all, " o          select its lock's holder"));
	assert_non_null(strstr(all, "share: anywhere on stack"));
	/* Every word the screen uses is defined at 80x24, whole (issue 17). */
	assert_non_null(strstr(all, " %Own       share of samples: leaf"));
	assert_non_null(strstr(all, " CPU %      1 core = 100%, not samples"));
	assert_non_null(strstr(all, " floor      CPU p10 over the window"));
	assert_non_null(strstr(all, " base       median CPU: 1st min, or b"));
	assert_non_null(strstr(all, " STAIRS     RSS up, no drops: a leak?"));
	assert_non_null(strstr(all, " ROLLERCOASTER RSS rises, drops: ok"));
	assert_non_null(strstr(all, " BUSY FLOOR busy in pauses of bursts"));
	assert_non_null(strstr(all, " if free    speed-up if it took 0 time"));
	assert_non_null(strstr(all, " N/s of M/s samples got / CPU burned"));
	assert_non_null(strstr(all, " Enter Esc  one thread only; all"));
	assert_non_null(strstr(all, " Press any key to return\n"));
	/* Nothing is cut off at 80 columns: every line ends before the edge. */
	for (int y = 0; y < 24; y++)
		assert_true(grid_at(&fx->g, 79, y)->ch == L' ' || y == 0);
}

/* The help's symbol sources: a module with no symbols at all comes first
 * (it is why rows show addresses); the others say where names came from;
 * names from the target are sanitized. */
static void test_help_symbols(void **state)
{
	struct fixture *fx = *state;
	const struct sym_module_note mods[] = {
	    {"prog", SYM_SRC_FDE},
	    {"libc.so.6", SYM_SRC_DYNSYM | SYM_SRC_NONE},
	    {"app", SYM_SRC_SYMTAB | SYM_SRC_INLINE},
	    {"evil\x1b[2J", SYM_SRC_NONE},
	};
	char all[8192], buf[128];

	help_text(fx, 100, 40, mods, 4, all);
	assert_non_null(strstr(all, "Symbols per module"));
	fixture_in_order(all, "evil?[2J       none: no symbols at all",
			 "prog           eh_frame ranges");
	assert_non_null(strstr(all, "libc.so.6      dynsym; some pcs unnamed"));
	assert_non_null(strstr(all, "app            symtab + DWARF inline"));
	assert_null(strchr(all, '\x1b'));
	/* Too many modules for the rows left: the rest are counted. */
	struct sym_module_note many[60];
	for (int i = 0; i < 60; i++)
		many[i] = (struct sym_module_note){"lib", SYM_SRC_DYNSYM};
	help_text(fx, 80, 24, many, 60, all);
	assert_non_null(strstr(all, " more"));
	assert_non_null(strstr(all, " Press any key to return\n"));
	assert_string_equal(view_symbol_sources(0, buf, sizeof(buf)), "none: no symbols at all");
	assert_string_equal(view_symbol_sources(SYM_SRC_DEBUG | SYM_SRC_PERFMAP, buf, sizeof(buf)),
			    "debug file + perf map");
}

/* Wall mode: 100 samples at 10 Hz (10 s of wall time) over 4 threads:
 *   main;serve;take_lock;[lock]      40  (tid 11)
 *   main;serve;take_lock             10  (tid 11, running)
 *   main;poll_loop;read_pipe;[I/O]   30  (tid 12)
 *   main;get_job;[idle]              20  (tid 13: waits for work) */
/* Sorting the wall-mode rows by a key: the underlined column header and
 * what rows 4.. hold. */
static const struct {
	enum sort_key sort;
	int ul_x;
	struct {
		int y;
		const char *has;
	} rows[3];
} wall_sorts[] = {
    /* By %Own (the default): where the threads wait, innermost first. */
    {SORT_OWN, 1, {{4, "take_lock"}, {5, "read_pipe"}, {6, "get_job"}}},
    /* By OffCPU. */
    {SORT_TOTALTIME, 24, {{4, "main"}, {5, "4.0s"}, {7, "3.0s"}}},
    /* By OnCPU: the three with 1.0s first. */
    {SORT_OWNTIME, 16, {{6, "1.0s"}, {7, "0.0s"}}},
};

static void test_wall(void **state)
{
	struct fixture *fx = *state;
	struct window *w;
	assert_int_equal(window_new_fx(60, SEC, &w), 0);
	uint32_t m = mkframe(w, 0x1000, false, "waiter", "main", "waiter.c", 10, 0);
	uint32_t sv = mkframe(w, 0x2000, false, "waiter", "serve", "waiter.c", 20, 0);
	uint32_t tl = mkframe(w, 0x3000, false, "waiter", "take_lock", "waiter.c", 30, 0);
	uint32_t pl = mkframe(w, 0x4000, false, "waiter", "poll_loop", "waiter.c", 40, 0);
	uint32_t rp = mkframe(w, 0x5000, false, "waiter", "read_pipe", "waiter.c", 50, 0);
	uint32_t np = mkframe(w, 0x6000, false, "waiter", "get_job", "waiter.c", 60, 0);
	uint32_t lk = (uint32_t)frames_wait(window_frames_mut(w), SAMPLE_WAIT_LOCK);
	uint32_t io = (uint32_t)frames_wait(window_frames_mut(w), SAMPLE_WAIT_IO);
	uint32_t sl = (uint32_t)frames_wait(window_frames_mut(w), SAMPLE_WAIT_IDLE);
	uint32_t s1[] = {m, sv, tl, lk}, s2[] = {m, sv, tl}, s3[] = {m, pl, rp, io},
		 s4[] = {m, np, sl};
	assert_int_equal(window_add(w, 30 * SEC, 11, s1, 4, 40), 0);
	assert_int_equal(window_add(w, 30 * SEC, 11, s2, 3, 10), 0);
	assert_int_equal(window_add(w, 30 * SEC, 12, s3, 4, 30), 0);
	assert_int_equal(window_add(w, 30 * SEC, 13, s4, 3, 20), 0);
	fx->h.mode = "wall";
	fx->h.rate_hz = 10;
	fx->st.utf8 = true; /* middle dots in the split line */
	fx->st.period_s = 0.1;
	fx->st.wall = true;
	fx->st.sort = SORT_TOTAL;
	struct window *cpu_w = fx->w;
	fx->w = w;
	render(fx, 80, 24);
	assert_rows(fx, 2,
		    "wall time: running 10% \xc2\xb7 lock 40% \xc2\xb7 I/O 30% "
		    "\xc2\xb7 idle 20%",
		    " %Own  %Total   OnCPU   OffCPU  Wait      Function (file)         Module",
		    "  0.0   100.0    1.0s     9.0s  lock      main (waiter.c)         waiter",
		    /* Equal totals: the one with more self first. */
		    " 50.0    50.0    1.0s     4.0s  lock      take_lock (waiter.c)    waiter",
		    "  0.0    50.0    1.0s     4.0s  lock      serve (waiter.c)        waiter",
		    " 30.0    30.0    0.0s     3.0s  I/O       read_pipe (waiter.c)    waiter",
		    "  0.0    30.0    0.0s     3.0s  I/O       poll_loop (waiter.c)    waiter",
		    " 20.0    20.0    0.0s     2.0s  idle      get_job (waiter.c)      waiter", "");
	assert_int_equal(fx->st.nrows, 6); /* no rows for the wait frames */
	/* %Total is the sorted column. */
	assert_true(grid_at(&fx->g, 7, 3)->attr & GRID_UNDERLINE);
	assert_false(grid_at(&fx->g, 1, 3)->attr & GRID_UNDERLINE);

	/* By %Own, OffCPU and OnCPU. */
	for (size_t i = 0; i < sizeof(wall_sorts) / sizeof(wall_sorts[0]); i++) {
		fx->st.sort = wall_sorts[i].sort;
		render(fx, 80, 24);
		assert_true(grid_at(&fx->g, wall_sorts[i].ul_x, 3)->attr & GRID_UNDERLINE);
		for (int k = 0; k < 3 && wall_sorts[i].rows[k].has; k++)
			assert_true(strstr(row(fx, wall_sorts[i].rows[k].y),
					   wall_sorts[i].rows[k].has) != NULL);
	}

	/* i: only the thread waiting for work is hidden; the reader (I/O) may
	 * be what the program waits for, so it stays (issue 17). */
	fx->st.sort = SORT_TOTAL;
	fx->st.hide_idle = true;
	render(fx, 80, 24);
	assert_true(strstr(row(fx, 2), "idle threads hidden") != NULL);
	assert_string_equal(row(fx, 4), "  0.0   100.0    1.0s     7.0s  lock      main (waiter.c)"
					"         waiter");
	assert_true(strstr(row(fx, 7), "read_pipe") != NULL);
	assert_int_equal(fx->st.nrows, 5); /* get_job is gone */

	/* Lock holders: thread 11 was seen waiting on locks held by 12 three
	 * times and by 14 once: the lock rows name 12 with 75% (by TID: no
	 * metrics here); the I/O rows name nobody. */
	struct locks lks = {0};
	struct locks_wait lw = {.pid = 1, .tid = 11, .kind = LOCKS_KIND_MUTEX, .owner = 12};
	for (int scan = 0; scan < 4; scan++) {
		locks_reset(&lks);
		lw.owner = scan < 3 ? 12 : 14;
		assert_int_equal(locks_add(&lks, &lw), 0);
		assert_int_equal(locks_build(&lks), 0);
		assert_int_equal(locks_tally(&lks, 1.0), 0);
	}
	fx->st.hide_idle = false;
	fx->st.locks = &lks;
	render(fx, 80, 24);
	/* At 80 columns the holder takes the Module column's room. */
	assert_string_equal(row(fx, 5),
			    " 50.0    50.0    1.0s     4.0s  lock      take_lock (waiter.c)  "
			    "held by 12 75%");
	assert_true(strstr(row(fx, 4), "main (waiter.c)  held by 12 75%") != NULL);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 64, 5)->attr), GRID_C_ALERT);
	assert_null(strstr(row(fx, 7), "held"));
	assert_true(strstr(row(fx, 7), "waiter") != NULL);
	/* Narrowed to another thread: nothing to say. */
	fx->st.tid = 12;
	render(fx, 80, 24);
	for (int y = 0; y < 24; y++)
		assert_null(strstr(row(fx, y), "held by"));
	fx->st.tid = 0;
	fx->st.locks = NULL;
	locks_free(&lks);

	/* cpu mode ignores hide_idle and shows no split line. */
	fx->st.wall = false;
	fx->h.mode = "cpu";
	shows(fx, 2,
	      " %Own  %Total  OwnTime  TotalTime  Function (file)"
	      "                Module");
	assert_int_equal(fx->st.nrows, 6);
	fx->w = cpu_w;
	view_top_state_free(&fx->st);
	window_free_fx(w);
}

/* Text of the whole grid, for comparing two renders. */
static char *grid_text(struct fixture *fx)
{
	size_t size = (size_t)fx->g.h * 2048, o = 0;
	char *all = calloc(1, size);

	assert_non_null(all);
	for (int y = 0; y < fx->g.h; y++)
		o += (size_t)snprintf(all + o, size - o, "%s\n", row(fx, y));
	return all;
}

/* Render draws what update kept and changes nothing: the same grid twice
 * from one const state; a frozen state keeps its rows while the window
 * changes, and takes new ones when it thaws. */
static void test_update_render_split(void **state)
{
	struct fixture *fx = *state;
	const struct view_top_state *cst = &fx->st;
	char *a, *b;

	render(fx, 80, 24);
	a = grid_text(fx);
	assert_int_equal(view_top_render(&fx->g, &fx->h, cst), 0);
	b = grid_text(fx);
	assert_string_equal(a, b);
	free(b);
	/* The window changes; render alone still draws the kept rows. */
	add(fx, 4260, 5000, 2, fx->f_main, fx->f_anon);
	assert_int_equal(view_top_render(&fx->g, &fx->h, cst), 0);
	b = grid_text(fx);
	assert_string_equal(a, b);
	free(b);
	/* Frozen: update keeps the rows too (sorted as the keys say). */
	fx->st.frozen = true;
	render(fx, 80, 24);
	b = grid_text(fx);
	assert_string_equal(a, b);
	free(b);
	assert_string_equal(func_col(fx, 6), "libfoo.so+0x1a2b");
	/* Thawed: the new samples show. */
	fx->st.frozen = false;
	render(fx, 80, 24);
	assert_string_equal(func_col(fx, 3), "libfoo.so+0x1a2b");
	free(a);
}

/* The top view's keys move its own state and name what the app must do. */
static void test_keys(void **state)
{
	struct fixture *fx = *state;
	struct view_action act;

	render(fx, 80, 24);
	assert_int_equal(fx->st.selected_frame, fx->f_parse);
	/* Sort: s > forward, S < back, wrapping. */
	assert_int_equal(view_top_key(&fx->st, 's').kind, VIEW_ACTION_USED);
	assert_int_equal(fx->st.sort, SORT_TOTAL);
	assert_int_equal(view_top_key(&fx->st, '>').kind, VIEW_ACTION_USED);
	assert_int_equal(fx->st.sort, SORT_OWNTIME);
	view_top_key(&fx->st, '<');
	view_top_key(&fx->st, 'S');
	assert_int_equal(fx->st.sort, SORT_OWN);
	view_top_key(&fx->st, 'S');
	assert_int_equal(fx->st.sort, SORT_TOTALTIME);
	fx->st.sort = SORT_OWN;
	render(fx, 80, 24);
	/* Selection: moved and clamped at once, the frame follows. */
	assert_int_equal(view_top_key(&fx->st, KEYS_DOWN).kind, VIEW_ACTION_USED);
	assert_int_equal(fx->st.selected, 1);
	assert_int_equal(fx->st.selected_frame, fx->f_decode);
	view_top_key(&fx->st, KEYS_END);
	assert_int_equal(fx->st.selected, fx->st.nrows - 1);
	view_top_key(&fx->st, KEYS_PGUP);
	assert_int_equal(fx->st.selected, 0);
	view_top_key(&fx->st, KEYS_UP);
	assert_int_equal(fx->st.selected, 0);
	view_top_key(&fx->st, KEYS_PGDN);
	assert_int_equal(fx->st.selected,
			 fx->st.nrows - 1 < fx->st.page ? fx->st.nrows - 1 : fx->st.page);
	view_top_key(&fx->st, KEYS_HOME);
	assert_int_equal(fx->st.selected, 0);
	/* Enter: open the selected function in the icicle. */
	act = view_top_key(&fx->st, KEYS_ENTER);
	assert_int_equal(act.kind, VIEW_ACTION_OPEN_ICICLE);
	assert_int_equal(act.frame, fx->f_parse);
	/* Esc: all threads again, only when narrowed. */
	assert_int_equal(view_top_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_NONE);
	fx->st.tid = 4250;
	assert_int_equal(view_top_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_NARROW_ALL);
	/* Keys of the app are left to it. */
	assert_int_equal(view_top_key(&fx->st, 'q').kind, VIEW_ACTION_NONE);
	assert_int_equal(view_top_key(&fx->st, '2').kind, VIEW_ACTION_NONE);
	/* No rows: Enter has nothing to open. */
	view_top_state_free(&fx->st);
	window_reset(fx->w);
	render(fx, 80, 24);
	assert_int_equal(view_top_key(&fx->st, KEYS_ENTER).kind, VIEW_ACTION_NONE);
}

/* The footer of a saved profile offers no pause: nothing is sampled. */
static void test_report_footer(void **state)
{
	struct fixture *fx = *state;

	render(fx, 80, 24);
	assert_non_null(strstr(row(fx, 23), "space pause"));
	fx->h.source = "saved.pb.gz";
	render(fx, 80, 24);
	assert_null(strstr(row(fx, 23), "pause"));
	assert_non_null(strstr(row(fx, 23), "2 icicle"));
}

TEST_MAIN(NULL, NULL, TEST_FX(test_80x24), TEST_FX(test_200x60), TEST_FX(test_sorting),
	  TEST_FX(test_lines_and_kernel), TEST_FX(test_thread_filter), TEST_FX(test_batch_limit),
	  TEST_FX(test_too_small), TEST_FX(test_selection), TEST_FX(test_sanitized),
	  TEST_FX(test_long_names), TEST_FX(test_cxx_short_names), TEST_FX(test_empty),
	  TEST_FX(test_header_variants), TEST_FX(test_header_rates_agree),
	  TEST_FX(test_header_unsampled), TEST_FX(test_header_symbols), TEST_FX(test_help),
	  TEST_FX(test_help_symbols), TEST_FX(test_wall), TEST_FX(test_update_render_split),
	  TEST_FX(test_keys), TEST_FX(test_report_footer))
