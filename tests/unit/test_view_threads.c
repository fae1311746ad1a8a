/* Unit tests for view_threads: a struct metrics filled by hand (threads with
 * known states, CPU series and flags, one zombie child) and a window with
 * known samples per thread are rendered at 80x24 and 200x60 and compared as
 * text, line by line; then sorting, selection, flags and sanitizing. Set
 * VIEW_THREADS_DUMP=1 to print the rendered grids. */
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
#include "stacktop/ui/view_chart.h"
#include "stacktop/ui/view_threads.h"

#define SEC FIXTURE_SEC
#define NTHREADS 6

/* The fixture's frames have a function and a module, no file; samples at
 * t = 59 s. */
#define mkframe(w, pc, kernel, mod, func) fixture_frame(w, pc, kernel, mod, func, NULL, 0, 0)
#define add(fx, tid, count, ...) fixture_add((fx)->w, 59, tid, count, __VA_ARGS__)

struct fixture {
	struct window *w;
	struct metrics m;
	struct view_header h;
	struct view_threads_state st;
	struct grid g;
};

/* A thread with a CPU series of 60 points (t = 1..60) from f(i). */
static struct metrics_thread *thread(struct fixture *fx, int i, pid_t tid, const char *comm,
				     char state, const char *wchan, double (*f)(int))
{
	struct metrics_thread *t = &fx->m.threads[i];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->state = state;
	snprintf(t->wchan, sizeof(t->wchan), "%s", wchan);
	t->alive = true;
	t->d_since = -1;
	assert_int_equal(series_init(&t->cpu, 60), 0);
	for (int k = 1; k <= 60; k++)
		series_push(&t->cpu, k, f(k));
	t->cpu_pct = f(60);
	return t;
}

static double cpu_poller(int k)
{
	return k % 2 ? 30.0 : 31.0;
}
static double cpu_main(int k)
{
	return (k / 5) % 2 ? 100.0 : 0.0; /* 5 s on, 5 s off */
}
static double cpu_zero(int k)
{
	return 0;
}
static double cpu_evil(int k)
{
	return k > 30 ? 60.0 : 0.0; /* only the second half */
}

/* Threads (window: 60 s, samples at 100 Hz):
 *   4250 poller   R            cpu 31.0  floor 29  BUSY FLOOR   busy_poll 1780
 *   4242 floor    S nanosleep  cpu 0     floor 0                main_work 2500 + 20 libc
 *   4251 idler    S futex_wait cpu 0     floor 0                (no samples)
 *   4260 loader   D io_sched.. cpu 0     floor 0   STUCK (D for 12s)   schedule [k] 3
 *   4261 evil\e.. S            cpu 60    floor 0                evil\e[2J 900
 *   4262 gone     (exited, no samples: not shown)
 *   4277 zombie child */
static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct metrics_thread *t;
	uint32_t f_start, f_poll, f_main, f_sleep, f_sched, f_evil;

	if (fixture_open(fx, 60, &fx->w) < 0)
		return -1;
	f_start = mkframe(fx->w, 0x1000, false, "floor", "start_thread");
	f_poll = mkframe(fx->w, 0x2000, false, "floor", "busy_poll");
	f_main = mkframe(fx->w, 0x3000, false, "floor", "main_work");
	f_sleep = mkframe(fx->w, 0x7f0000, false, "libc.so.6", "clock_nanosleep");
	f_sched = mkframe(fx->w, 0xffffffff81000000ull, true, "[kernel]", "schedule");
	f_evil = mkframe(fx->w, 0x4000, false, "floor", "evil\x1b[2Jfn");
	add(fx, 4250, 1780, 2, f_start, f_poll);
	add(fx, 4242, 2500, 2, f_start, f_main);
	add(fx, 4242, 20, 2, f_start, f_sleep);
	add(fx, 4260, 3, 2, f_start, f_sched);
	add(fx, 4261, 900, 2, f_start, f_evil);

	fx->m.pid = 4242;
	fx->m.cfg.window_s = 60;
	fx->m.last_t = 60;
	fx->m.threads = calloc(NTHREADS, sizeof(*fx->m.threads));
	assert_non_null(fx->m.threads);
	fx->m.nthreads = fx->m.cap = NTHREADS;
	t = thread(fx, 0, 4242, "floor", 'S', "hrtimer_nanosleep", cpu_main);
	t = thread(fx, 1, 4250, "poller", 'R', "", cpu_poller);
	t->floor_pct = 29.4;
	t->busy_floor = true;
	t = thread(fx, 2, 4251, "idler", 'S', "futex_wait_queue", cpu_zero);
	t = thread(fx, 3, 4260, "loader", 'D', "io_schedule", cpu_zero);
	t->stuck = true;
	t->d_since = 48;
	t->d_for_s = 12;
	t = thread(fx, 4, 4261, "evil\x1b[2Jname", 'S', "", cpu_evil);
	t = thread(fx, 5, 4262, "gone", 'S', "", cpu_zero);
	t->alive = false;
	fx->m.zombies[0] = 4277;
	fx->m.nzombies = 1;

	fx->h = FIXTURE_HEADER(.cmdline = "./floor", .nthreads = 5, .rate_hz = 100,
			       .achieved_hz = 131.0, .samples_window = 5203, .samples_total = 5203,
			       .window_s = 60, .span_s = 60);
	return fixture_ready(state, fx, &fx->g);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < fx->m.nthreads; i++)
		series_free(&fx->m.threads[i].cpu);
	free(fx->m.threads);
	view_threads_state_free(&fx->st);
	return fixture_close(fx, fx->w, &fx->g);
}

static void render(struct fixture *fx, int w, int h)
{
	fixture_render(fx, w, h, view_threads_update(&fx->st, &fx->h, &fx->m, fx->w, w, h),
		       view_threads_render(&fx->g, &fx->h, &fx->m, &fx->st), "VIEW_THREADS_DUMP");
}

/* Column x of the first cell of needle in row y, or -1. */
static int col_of(struct fixture *fx, int y, const char *needle)
{
	const char *r = row(fx, y), *p = strstr(r, needle);

	return p ? (int)(p - r) : -1; /* byte offset: callers use ASCII rows */
}

static void test_80x24(void **state)
{
	struct fixture *fx = *state;

	render(fx, 80, 24);
	assert_string_equal(row(fx, 0), "stacktop  pid 4242  ./floor                    "
					"cpu 100 Hz  5 threads  window 60s");
	assert_rows(
	    fx, 2, "  TID  NAME            STATE          CPU now  floor  SAMPLES",
	    /* Sorted by CPU now: 60 (evil), 31 (poller), then the zeros by
	     * floor, then samples (floor 2520, loader 3, idler 0); the zombie
	     * child last. Flags take 17 columns ("STUCK (D for 12s)"), which
	     * leaves SAMPLES but no room for the sparkline or HOTTEST. */
	    " 4261  evil?[2Jname    S sleeping       60.0%     0%      900",
	    " 4250  poller          R running        31.0%    29%    1,780  BUSY FLOOR",
	    " 4242  floor           S sleep: nan…     0.0%     0%    2,520",
	    " 4260  loader          D io_schedule     0.0%     0%        3  STUCK (D for 12s)",
	    " 4251  idler           S futex_wait      0.0%     0%        0",
	    " 4277  [child]         Z defunct                               ZOMBIE");
	assert_blank(fx, 9, 22);
	assert_string_equal(row(fx, 23), " Enter: only this thread  Esc: all  s: sort (cpu)"
					 "  ? help  q quit");
	assert_int_equal(fx->st.nrows, 6);
	assert_int_equal(fx->st.page, 20);
	assert_int_equal(fx->st.selected_tid, 4261);
	/* Attributes: column header colour, CPU column marked as the sort,
	 * the selection reversed, BUSY FLOOR in the alert colour and bold. */
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 79, 2)->attr), GRID_C_HEADER);
	assert_true(grid_at(&fx->g, 38, 2)->attr & GRID_UNDERLINE); /* "CPU now" */
	assert_false(grid_at(&fx->g, 2, 2)->attr & GRID_UNDERLINE);
	assert_true(grid_at(&fx->g, 0, 3)->attr & GRID_REVERSE);
	assert_true(grid_at(&fx->g, 79, 3)->attr & GRID_REVERSE);
	assert_false(row_has_attr(fx, 4, GRID_REVERSE));
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 63, 4)->attr), GRID_C_ALERT);
	assert_true(grid_at(&fx->g, 63, 4)->attr & GRID_BOLD);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 63, 6)->attr), GRID_C_RED);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 63, 8)->attr), GRID_C_MAGENTA);
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 79, 23)->attr), GRID_C_HEADER);

	/* The same sleeper seen in wall mode, just after a stop ("restart"
	 * or only the syscall entry in its wchan): one name, not
	 * "syscall_64" (issue 17 item 9). */
	struct metrics_thread *t = NULL;
	for (int i = 0; i < fx->m.nthreads; i++)
		if (fx->m.threads[i].tid == 4242)
			t = &fx->m.threads[i];
	assert_non_null(t);
	snprintf(t->wchan, sizeof(t->wchan), "hrtimer_nanosleep_restart");
	render(fx, 80, 24);
	assert_non_null(strstr(row(fx, 5), "S sleep: nan"));
	snprintf(t->wchan, sizeof(t->wchan), "do_syscall_64");
	render(fx, 80, 24);
	assert_null(strstr(row(fx, 5), "syscall"));
	assert_non_null(strstr(row(fx, 5), " S sleeping"));
}

/* The BUSY FLOOR alert quotes each floor thread with the figure of its
 * floor column here (issue 24 item 7: it said ">= 24%" beside a 35%),
 * every one of them: a second poller is named too. */
static void test_floor_alert_figure(void **state)
{
	struct fixture *fx = *state;
	char alert[256], want[64];

	fx->m.alert_busy_floor = true;
	fx->m.alert_floor = 31;
	render(fx, 80, 24);
	assert_non_null(strstr(row(fx, 4), " 4250  poller "));
	assert_non_null(strstr(row(fx, 4), "    29%  "));
	view_chart_alerts_text(&fx->m, alert, sizeof(alert));
	snprintf(want, sizeof(want), "poller (4250) 29%%");
	assert_non_null(strstr(alert, want));
	/* A second floor thread (idler, given a floor for the test). */
	fx->m.threads[2].busy_floor = true;
	fx->m.threads[2].floor_pct = 12.4;
	render(fx, 80, 24);
	view_chart_alerts_text(&fx->m, alert, sizeof(alert));
	assert_string_equal(
	    alert,
	    "! BUSY FLOOR in the pauses between bursts: poller (4250) 29%, idler (4251) 12%");
	fx->m.threads[2].busy_floor = false;
	fx->m.threads[2].floor_pct = 0;
	fx->m.alert_busy_floor = false;
}

/* Without the long STUCK flag, 80 columns keep SAMPLES and a sparkline. */
static void test_80x24_no_stuck(void **state)
{
	struct fixture *fx = *state;

	fx->m.threads[3].stuck = false;
	fx->m.nzombies = 0;
	fx->m.threads[1].busy_floor = false;
	render(fx, 80, 24);
	assert_rows(
	    fx, 2, "  TID  NAME            STATE          CPU now  floor  last 60s (CPU)   SAMPLES",
	    /* 15 columns for 60 s: 4 s a column, the mean of its points. evil
	     * runs at 60% from t = 31 on ('|' is 50-75% of a core; the column
	     * (28, 32] is half busy: 30%, ':'); poller 30-31% (':') all along;
	     * floor 5 s on (100%), 5 s off, so its columns hold 0, 25, 50, 75 or
	     * 100% of a core: ' ', '.', ':', '|', '#'. */
	    " 4261  evil?[2Jname    S sleeping       60.0%     0%         :|||||||      900",
	    " 4250  poller          R running        31.0%    29%  :::::::::::::::    1,780",
	    " 4242  floor           S sleep: nan…     0.0%     0%   #.:| #.:| #.:|    2,520",
	    " 4260  loader          D io_schedule     0.0%     0%                         3",
	    " 4251  idler           S futex_wait      0.0%     0%                         0");
	assert_blank(fx, 8, 22);
}

static void test_200x60(void **state)
{
	struct fixture *fx = *state;
	char want[512];
	int x;

	render(fx, 200, 60);
	assert_string_equal(row(fx, 2),
			    "  TID  NAME            STATE          "
			    "           CPU now  floor  "
			    "last 60s (CPU)                                                "
			    "SAMPLES  HOTTEST NOW");
	/* One sparkline column a second at 200 columns; what is left over
	 * widens STATE to 24. */
	snprintf(want, sizeof(want),
		 " 4250  poller          R running                   31.0%%    29%%  "
		 "%s    1,780  busy_poll",
		 "::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::");
	assert_int_equal(strncmp(row(fx, 4), want, strlen(want)), 0);
	/* HOTTEST is 40 columns at most, then the flags. */
	x = col_of(fx, 4, "BUSY FLOOR");
	assert_int_equal(x, 65 + 62 + 9 + 42); /* STATE widened by 11 */
	assert_int_equal(col_of(fx, 4, "busy_poll"), 65 + 62 + 9);
	/* Hottest: most own samples of the thread (main_work over the libc
	 * sleep), a kernel frame marked [k], an escape sequence sanitized. */
	assert_true(strstr(row(fx, 5), "2,520  main_work") != NULL);
	assert_true(strstr(row(fx, 6), "      3  schedule [k]") != NULL);
	assert_true(strstr(row(fx, 6), "STUCK (D for 12s)") != NULL);
	assert_true(strstr(row(fx, 3), "900  evil?[2Jfn") != NULL);
	snprintf(want, sizeof(want),
		 " 4251  idler           S futex_wait                 0.0%%     0%%%64s%7s", "",
		 "0");
	/* No samples, no hottest, no flags; a futex alone names no wait kind
	 * (a mutex and a condition variable wait in it alike). */
	assert_string_equal(row(fx, 7), want);
	/* Flags line up in one column. */
	assert_int_equal(col_of(fx, 6, "STUCK"), x);
	assert_int_equal(col_of(fx, 8, "ZOMBIE"), x);
	assert_string_equal(row(fx, 59), " Enter: only this thread  Esc: all threads  s: sort (cpu)"
					 "  1 top  2 icicle  3 threads  ? help  q quit");
	for (int y = 0; y < 60; y++)
		for (x = 0; x < 200; x++)
			assert_true(grid_at(&fx->g, x, y)->ch != 0x1b);
}

/* The tid order of the rows on screen, "4261 4250 ...". */
static const char *order(struct fixture *fx)
{
	static char buf[256];
	size_t o = 0;

	buf[0] = 0;
	for (int y = 3; y < fx->g.h - 1; y++) {
		int tid = atoi(row(fx, y));

		if (tid)
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%d", o ? " " : "", tid);
	}
	return buf;
}

static void test_sort_cycle(void **state)
{
	/* Each s: the sort, the tid order on screen, what the footer names
	 * (NULL: not checked) and the underlined column header (-1: none
	 * checked). */
	static const struct {
		enum view_threads_sort sort;
		const char *order, *footer;
		int ul_x;
	} steps[] = {
	    {VIEW_THREADS_SORT_CPU, "4261 4250 4242 4260 4251 4277", NULL, -1},
	    {VIEW_THREADS_SORT_FLOOR, "4250 4261 4242 4260 4251 4277", "s: sort (floor)", 47},
	    {VIEW_THREADS_SORT_SAMPLES, "4242 4250 4261 4260 4251 4277", "s: sort (samples)", -1},
	    {VIEW_THREADS_SORT_TID, "4242 4250 4251 4260 4261 4277", NULL, 2},
	    /* By name: "evil..." < "floor" < "idler" < "loader" < "poller". */
	    {VIEW_THREADS_SORT_NAME, "4261 4242 4251 4260 4250 4277", "s: sort (name)", -1},
	};
	struct fixture *fx = *state;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (i > 0)
			assert_true(view_threads_key(&fx->st, 's').kind);
		assert_int_equal(fx->st.sort, steps[i].sort);
		render(fx, 100, 30);
		assert_string_equal(order(fx), steps[i].order);
		if (steps[i].footer)
			assert_true(strstr(row(fx, 29), steps[i].footer) != NULL);
		if (steps[i].ul_x >= 0)
			assert_true(grid_at(&fx->g, steps[i].ul_x, 2)->attr & GRID_UNDERLINE);
	}
	view_threads_key(&fx->st, 's');
	assert_int_equal(fx->st.sort, VIEW_THREADS_SORT_CPU);
	assert_string_equal(view_threads_sort_name(VIEW_THREADS_SORT_SAMPLES), "samples");
}

/* key moves the selection to row index sel, thread tid (-1: not checked),
 * drawn reversed on screen row y of a 100x30 screen. */
static void key_selects(struct fixture *fx, int key, size_t sel, int tid, int y)
{
	assert_true(view_threads_key(&fx->st, key).kind);
	render(fx, 100, 30);
	assert_int_equal(fx->st.selected, sel);
	if (tid >= 0)
		assert_int_equal(fx->st.selected_tid, tid);
	assert_true(row_has_attr(fx, y, GRID_REVERSE));
}

static void test_selection(void **state)
{
	struct fixture *fx = *state;

	render(fx, 100, 30);
	assert_int_equal(fx->st.selected_tid, 4261);
	key_selects(fx, KEYS_DOWN, 1, 4250, 4);
	assert_false(row_has_attr(fx, 3, GRID_REVERSE));
	/* A re-sort keeps the selection on the same thread. */
	view_threads_key(&fx->st, 's');
	key_selects(fx, 's', 1, 4250, 4); /* samples: 4242 4250 ... */
	/* End clamps to the last row: the zombie child, which is no thread. */
	key_selects(fx, KEYS_END, 5, 0, 8);
	fx->st.selected = 1000;
	fx->st.follow = 0;
	render(fx, 100, 30);
	assert_int_equal(fx->st.selected, 5);
	key_selects(fx, KEYS_PGUP, 0, -1, 3);
	key_selects(fx, KEYS_UP, 0, 4242, 3);
	assert_false(view_threads_key(&fx->st, 'x').kind);
	/* Enter: only this thread; Esc: all threads, once narrowed. */
	struct view_action act = view_threads_key(&fx->st, KEYS_ENTER);
	assert_int_equal(act.kind, VIEW_ACTION_NARROW);
	assert_int_equal(act.tid, 4242);
	assert_int_equal(view_threads_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_NONE);
	fx->st.tid = 4242;
	assert_int_equal(view_threads_key(&fx->st, KEYS_ESC).kind, VIEW_ACTION_NARROW_ALL);
	/* The zombie child is no thread: Enter is not for it. */
	view_threads_key(&fx->st, KEYS_END);
	assert_int_equal(view_threads_key(&fx->st, KEYS_ENTER).kind, VIEW_ACTION_NONE);
}

/* A short screen scrolls to keep the selection visible. */
static void test_scroll(void **state)
{
	struct fixture *fx = *state;
	struct metrics_thread *more = realloc(fx->m.threads, 12 * sizeof(*more));

	assert_non_null(more);
	fx->m.threads = more;
	for (int i = NTHREADS; i < 12; i++) {
		char name[16];

		snprintf(name, sizeof(name), "w%d", i);
		thread(fx, i, 5000 + i, name, 'S', "", cpu_zero);
	}
	fx->m.nthreads = fx->m.cap = 12;
	/* 12 rows: 11 live threads and the zombie child; 12 lines: header 2,
	 * columns 1, footer 1, so 8 rows fit. */
	render(fx, 80, 12);
	assert_int_equal(fx->st.nrows, 12);
	assert_int_equal(fx->st.page, 8);
	assert_int_equal(atoi(row(fx, 3)), 4261);
	assert_true(view_threads_key(&fx->st, KEYS_END).kind);
	render(fx, 80, 12);
	assert_int_equal(fx->st.selected, 11);
	assert_int_equal(fx->st.scroll, 4);
	assert_int_equal(atoi(row(fx, 10)), 4277); /* the last row, selected */
	assert_true(row_has_attr(fx, 10, GRID_REVERSE));
	assert_true(view_threads_key(&fx->st, KEYS_PGUP).kind); /* a page less one row */
	render(fx, 80, 12);
	assert_int_equal(fx->st.selected, 4);
	assert_int_equal(fx->st.scroll, 4);
	assert_true(row_has_attr(fx, 3, GRID_REVERSE));
	view_threads_key(&fx->st, KEYS_UP);
	render(fx, 80, 12);
	assert_int_equal(fx->st.scroll, 3);
	view_threads_key(&fx->st, KEYS_HOME);
	render(fx, 80, 12);
	assert_int_equal(fx->st.scroll, 0);
	assert_int_equal(fx->st.selected_tid, 4261);
	view_threads_key(&fx->st, KEYS_PGDN);
	render(fx, 80, 12);
	assert_int_equal(fx->st.selected, 7);
	assert_int_equal(fx->st.scroll, 0);
}

static void test_too_small(void **state)
{
	struct fixture *fx = *state;

	render(fx, 100, 30);
	render(fx, 59, 20);
	assert_string_equal(row(fx, 10), "          terminal too small: 59x20 (need 60x12)");
	assert_blank(fx, 0, 9);
	assert_int_equal(fx->st.selected_tid, 4261); /* kept for Enter */
	render(fx, 80, 11);
	assert_true(strstr(row(fx, 5), "terminal too small: 80x11") != NULL);
}

static void test_utf8_sparkline(void **state)
{
	struct fixture *fx = *state;

	fx->st.utf8 = true;
	render(fx, 200, 60);
	/* 31% of a core: the third of eight blocks (U+2583). */
	assert_true(strstr(row(fx, 4), "31.0%    29%  \u2583\u2583\u2583") != NULL);
	/* floor: full blocks for its busy seconds, blank for idle ones. */
	assert_true(strstr(row(fx, 5), "0%      \u2588\u2588\u2588\u2588\u2588     \u2588") !=
		    NULL);
}

/* A gone thread with samples left in the window stays, dimmed, as exited;
 * a thread in state Z is flagged ZOMBIE; no metrics yet: a notice. */
static void test_exited_and_zombie_thread(void **state)
{
	struct fixture *fx = *state;
	uint32_t f = mkframe(fx->w, 0x5000, false, "floor", "short_job");
	const char *r;

	add(fx, 4262, 5, 1, f);
	fx->m.threads[2].state = 'Z';
	fx->m.threads[2].zombie = true;
	fx->st.sort = VIEW_THREADS_SORT_TID;
	render(fx, 100, 30);
	assert_string_equal(order(fx), "4242 4250 4251 4260 4261 4262 4277");
	r = row(fx, 5);
	assert_true(strstr(r, " 4251  idler           Z zombie ") == r);
	assert_true(strstr(r, "ZOMBIE") != NULL);
	/* exited: no CPU now, its floor, its samples */
	assert_string_equal(row(fx, 8), " 4262  gone            X exited                   0%"
					"                            5");
	assert_true(grid_at(&fx->g, 8, 8)->attr & GRID_DIM);

	render(fx, 100, 30);
	assert_int_equal(view_threads_update(&fx->st, &fx->h, NULL, fx->w, 100, 30), 0);
	assert_int_equal(view_threads_render(&fx->g, &fx->h, NULL, &fx->st), 0);
	assert_true(strstr(row(fx, 3), "waiting for thread data") != NULL);
	assert_int_equal(fx->st.nrows, 0);
	assert_int_equal(fx->st.selected_tid, 0);
}

/* Threads of two processes (metrics->multi): PID and PROCESS come first,
 * the process name escaped and cut to 8 columns; at 80 columns SAMPLES
 * stays and the sparkline goes. Sorting by TID groups a process's threads;
 * ties keep TID order, so rows do not swap between refreshes. */
static void test_multi_process(void **state)
{
	struct fixture *fx = *state;

	for (int i = 0; i < fx->m.nthreads; i++) {
		struct metrics_thread *t = &fx->m.threads[i];
		bool second = t->tid >= 4260;
		t->pid = second ? 4260 : 4242;
		snprintf(t->pcomm, sizeof(t->pcomm), "%s", second ? "loader\x1b[2Jxyz" : "floor");
	}
	fx->m.threads[3].stuck = false;
	fx->m.threads[1].busy_floor = false;
	fx->m.nzombies = 0;
	fx->m.multi = true;
	render(fx, 80, 24);
	assert_true(fx->st.multi);
	assert_rows(
	    fx, 2, "  PID  PROCESS    TID  NAME            STATE          CPU now  floor  SAMPLES",
	    " 4260  loader?…  4261  evil?[2Jname    S sleeping       60.0%     0%      900",
	    " 4242  floor     4250  poller          R running        31.0%    29%    1,780",
	    " 4242  floor     4242  floor           S sleep: nan…     0.0%     0%    2,520",
	    " 4260  loader?…  4260  loader          D io_schedule     0.0%     0%        3",
	    " 4242  floor     4251  idler           S futex_wait      0.0%     0%        0");
	assert_blank(fx, 8, 22);

	/* Sort by TID: PID first, then TID. */
	fx->st.sort = VIEW_THREADS_SORT_TID;
	render(fx, 80, 24);
	assert_rows(
	    fx, 3, " 4242  floor     4242  floor           S sleep: nan…     0.0%     0%    2,520",
	    " 4242  floor     4250  poller          R running        31.0%    29%    1,780",
	    " 4242  floor     4251  idler           S futex_wait      0.0%     0%        0",
	    " 4260  loader?…  4260  loader          D io_schedule     0.0%     0%        3",
	    " 4260  loader?…  4261  evil?[2Jname    S sleeping       60.0%     0%      900");

	/* Equal CPU, floor and samples: TID order, whatever the table order. */
	fx->st.sort = VIEW_THREADS_SORT_CPU;
	for (int i = 0; i < fx->m.nthreads; i++) {
		fx->m.threads[i].cpu_pct = 5;
		fx->m.threads[i].floor_pct = 0;
	}
	fixture_add(fx->w, 59, 4251, 2520, 1, mkframe(fx->w, 0x9000, false, "floor", "f"));
	fixture_add(fx->w, 59, 4250, 740, 1, mkframe(fx->w, 0x9100, false, "floor", "g"));
	render(fx, 80, 24);
	assert_int_equal(fx->st.rows[0].id, 4242);
	assert_int_equal(fx->st.rows[1].id, 4250);
	assert_int_equal(fx->st.rows[2].id, 4251);

	/* One process again: the table as before. */
	fx->m.multi = false;
	render(fx, 80, 24);
	assert_false(fx->st.multi);
	assert_string_equal(
	    row(fx, 2),
	    "  TID  NAME            STATE          CPU now  floor  last 60s (CPU)   SAMPLES");
}

/* The icicle's per-thread roots: "PID:TID name" with several processes,
 * "tid TID name" with one, escaped; "" for a thread metrics does not know. */
static void test_label(void **state)
{
	struct fixture *fx = *state;
	char buf[128];

	view_threads_label(&fx->m, 4261, buf, sizeof(buf));
	assert_string_equal(buf, "tid 4261 evil?[2Jname");
	fx->m.multi = true;
	fx->m.threads[4].pid = 4260;
	view_threads_label(&fx->m, 4261, buf, sizeof(buf));
	assert_string_equal(buf, "4260:4261 evil?[2Jname");
	view_threads_label(&fx->m, 999, buf, sizeof(buf));
	assert_string_equal(buf, "");
	view_threads_label(NULL, 4261, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* Lock waits: floor (4242) and idler (4251) deadlock, evil waits on a
 * condition variable (no owner), loader on a lock whose owner is unknown. */
static void locks_fixture(struct locks *lk)
{
	const struct locks_wait w[] = {
	    {.pid = 4242,
	     .tid = 4251,
	     .addr = 0x7f00000010a0ull,
	     .kind = LOCKS_KIND_MUTEX,
	     .owner = 4242},
	    {.pid = 4242,
	     .tid = 4242,
	     .addr = 0x55000000b0ull,
	     .kind = LOCKS_KIND_MUTEX,
	     .owner = 4251},
	    {.pid = 4242, .tid = 4261, .addr = 0x5500000100ull, .kind = LOCKS_KIND_NOOWNER},
	    {.pid = 4242, .tid = 4260, .addr = 0x5500000200ull, .kind = LOCKS_KIND_MUTEX},
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		assert_int_equal(locks_add(lk, &w[i]), 0);
	assert_int_equal(locks_build(lk), 0);
}

static int find_row(struct fixture *fx, int h, const char *tid)
{
	for (int y = 0; y < h; y++)
		if (strncmp(row(fx, y), tid, strlen(tid)) == 0)
			return y;
	return -1;
}

static void test_locks_flags(void **state)
{
	struct fixture *fx = *state;
	struct locks lk = {0};
	int y;

	locks_fixture(&lk);
	fx->st.locks = &lk;
	fx->m.threads[3].stuck = false;
	render(fx, 80, 24);
	/* The alert line, then the table one row lower. */
	assert_string_equal(row(fx, 2), "! DEADLOCK floor (4242) <-> idler (4251)");
	assert_int_equal(GRID_COLOR_OF(grid_at(&fx->g, 0, 2)->attr), GRID_C_RED);
	assert_non_null(strstr(row(fx, 3), "TID  NAME"));
	assert_int_equal(fx->st.page, 19);
	/* At 80 columns the short holder text; never more than 80 columns. */
	y = find_row(fx, 24, " 4251  idler");
	assert_true(y > 0);
	assert_non_null(strstr(row(fx, y), "DEADLOCK  held by floor (4242)"));
	y = find_row(fx, 24, " 4242  floor");
	assert_non_null(strstr(row(fx, y), "DEADLOCK  held by idler (4251)"));
	y = find_row(fx, 24, " 4260  loader");
	assert_non_null(strstr(row(fx, y), "owner unknown"));
	assert_null(strstr(row(fx, y), "DEADLOCK"));
	/* No owner is claimed for a condition variable. */
	y = find_row(fx, 24, " 4261  evil");
	assert_null(strstr(row(fx, y), "held"));
	assert_null(strstr(row(fx, y), "owner"));
	assert_int_equal(grid_at(&fx->g, 79, 2)->ch, L' ');
	/* Wide: the lock's address too. */
	render(fx, 200, 60);
	y = find_row(fx, 60, " 4251  idler");
	assert_non_null(strstr(row(fx, y), "DEADLOCK  lock 0x7f..a0 held by floor (4242)"));
	/* UTF-8: the two-way arrow and the ellipsis. */
	fx->st.utf8 = true;
	render(fx, 200, 60);
	assert_non_null(strstr(row(fx, 2), "! DEADLOCK floor (4242) \xe2\x87\x84 idler (4251)"));
	y = find_row(fx, 60, " 4251  idler");
	assert_non_null(strstr(row(fx, y), "lock 0x7f\xe2\x80\xa6"
					   "a0 held by floor (4242)"));
	/* o: from idler to the holder of its lock, floor; nothing from evil. */
	fx->st.follow = 4251;
	render(fx, 100, 30);
	assert_int_equal(fx->st.selected_tid, 4251);
	assert_int_equal(view_threads_key(&fx->st, 'o').kind, VIEW_ACTION_USED);
	render(fx, 100, 30);
	assert_int_equal(fx->st.selected_tid, 4242);
	fx->st.follow = 4261;
	render(fx, 100, 30);
	assert_int_equal(view_threads_key(&fx->st, 'o').kind, VIEW_ACTION_NONE);
	assert_int_equal(fx->st.selected_tid, 4261);
	/* No cycle, but reading was refused: a note says why instead. */
	locks_reset(&lk);
	lk.read_err = -EPERM;
	lk.read_err_pid = 4242;
	render(fx, 100, 30);
	assert_non_null(
	    strstr(row(fx, 2), "lock owners unknown: not permitted to read process 4242"));
	fx->st.locks = NULL;
	locks_free(&lk);
}

/* Cpu mode: no stack, so a futex wait is told by what the session read of
 * it: no owner (a condition variable) is idle, a mutex is lock; the same
 * words as wall mode and the icicle (issue 21). */
static void test_cpu_futex_waits(void **state)
{
	struct fixture *fx = *state;
	struct locks lk = {0};
	struct locks_wait w = {
	    .pid = 4242, .tid = 4251, .addr = 0x5500000100ull, .kind = LOCKS_KIND_NOOWNER};
	const char *r;

	assert_int_equal(locks_add(&lk, &w), 0);
	assert_int_equal(locks_build(&lk), 0);
	fx->st.locks = &lk;
	fx->st.sort = VIEW_THREADS_SORT_TID;
	render(fx, 200, 60);
	r = row(fx, find_row(fx, 60, " 4251  idler"));
	assert_true(strstr(r, " 4251  idler           S idle: futex_wait ") == r);
	locks_reset(&lk);
	w.kind = LOCKS_KIND_MUTEX;
	assert_int_equal(locks_add(&lk, &w), 0);
	assert_int_equal(locks_build(&lk), 0);
	render(fx, 200, 60);
	r = row(fx, find_row(fx, 60, " 4251  idler"));
	assert_true(strstr(r, " 4251  idler           S lock: futex_wait ") == r);
	/* Other wchans are their own kind: nanosleep is a sleep. */
	r = row(fx, find_row(fx, 60, " 4242  floor"));
	assert_true(strstr(r, " 4242  floor           S sleep: nanosleep ") == r);
	fx->st.locks = NULL;
	locks_free(&lk);
}

/* Wall mode: a futex wait reads as the kind the window saw (a condition
 * variable wait is idle, not lock), and a runnable thread's share of
 * waiting for a CPU is in its state (issue 17). */
static void test_wall_waits(void **state)
{
	struct fixture *fx = *state;
	uint32_t f_job = mkframe(fx->w, 0x6000, false, "floor", "get_job");
	uint32_t f_poll = mkframe(fx->w, 0x2000, false, "floor", "busy_poll");
	uint32_t idle = (uint32_t)frames_wait(window_frames_mut(fx->w), SAMPLE_WAIT_IDLE);
	uint32_t cpu = (uint32_t)frames_wait(window_frames_mut(fx->w), SAMPLE_WAIT_CPU);

	add(fx, 4251, 50, 2, f_job, idle);
	add(fx, 4250, 1187, 2, f_poll, cpu); /* 1780 running: 40% waiting for a CPU */
	fx->st.sort = VIEW_THREADS_SORT_TID;
	render(fx, 200, 60);
	const char *r = row(fx, 4);
	assert_true(strstr(r, " 4250  poller          R CPU-wait 40% ") == r);
	r = row(fx, 5);
	assert_true(strstr(r, " 4251  idler           S idle: futex_wait ") == r);
	r = row(fx, 3);
	assert_true(strstr(r, " 4242  floor           S sleep: nanosleep ") == r);
	/* At 80 columns (STATE 13 wide) the share still shows. */
	render(fx, 80, 24);
	r = row(fx, 4);
	assert_true(strstr(r, " 4250  poller          CPU-wait 40% ") == r);
	/* The kind stays, the function is what is cut (was "S futex_wait",
	 * the kind dropped for the kernel's word). */
	r = row(fx, 5);
	assert_true(strstr(r, " 4251  idler           S idle: fute… ") == r);
}

/* The tid order of the sleepers' rows (rows 5..7 under the two busy ones). */
static void tied_order(struct fixture *fx, char *out, size_t size)
{
	size_t len = 0;

	render(fx, 80, 24);
	out[0] = '\0';
	for (int y = 5; y <= 7; y++)
		len += (size_t)snprintf(out + len, size - len, "%s%.4s", y > 5 ? " " : "",
					row(fx, y) + 1);
	(void)len;
}

/* Wall mode samples every thread alike: rows that read the same (0.0%,
 * 0%) are ordered by TID whatever their sample counts or the hundredths
 * of a percent no one sees, so they do not swap each second (issue 24). */
static void test_wall_ties_stable(void **state)
{
	struct fixture *fx = *state;
	char order[64];
	struct metrics_thread *floor_ = &fx->m.threads[0], *idler = &fx->m.threads[2];

	fx->h.mode = "wall";
	floor_->cpu_pct = 0.04;
	idler->cpu_pct = 0.01;
	tied_order(fx, order, sizeof(order));
	assert_string_equal(order, "4242 4251 4260");
	/* A second later: the idler got more samples and read higher. */
	floor_->cpu_pct = 0.01;
	idler->cpu_pct = 0.04;
	add(fx, 4251, 3000, 1, mkframe(fx->w, 0x6000, false, "floor", "get_job"));
	tied_order(fx, order, sizeof(order));
	assert_string_equal(order, "4242 4251 4260");
}

TEST_MAIN(NULL, NULL, TEST_FX(test_80x24), TEST_FX(test_80x24_no_stuck), TEST_FX(test_200x60),
	  TEST_FX(test_cpu_futex_waits), TEST_FX(test_sort_cycle), TEST_FX(test_selection),
	  TEST_FX(test_scroll), TEST_FX(test_too_small), TEST_FX(test_utf8_sparkline),
	  TEST_FX(test_exited_and_zombie_thread), TEST_FX(test_multi_process), TEST_FX(test_label),
	  TEST_FX(test_locks_flags), TEST_FX(test_wall_waits), TEST_FX(test_floor_alert_figure),
	  TEST_FX(test_wall_ties_stable))
