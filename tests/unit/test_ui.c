/*
 * test_ui — the front end over a fixture window (fixture.h): the global
 * keys through ui_key (quit, views, pause, toggles, help, reset, a and its
 * annotate view, the lower-case aliases), Enter on
 * the top view's selection opening the icicle, the header fields ui owns,
 * and batch text from ui_print; the whole machine (a machine of two
 * processes and stacks under their root frames): the process table first,
 * Enter narrowing every view to a process, Esc and 0 coming back, key 0
 * elsewhere, and batch output (the process table, then the top view).
 */
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

#include "stacktop/proc/machine.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/ui/keys.h"
#include "stacktop/ui/ui.h"

#define NOW (40 * FIXTURE_SEC)
#define COLS 100
#define ROWS 30

struct fx {
	struct window *w;
	struct ui_config o;
	struct ui_model m;
	struct ui ui;
	struct view_header h;
	uint32_t f_main, f_handle, f_parse, f_idle;
};

/*   main;handle_request;parse_row   70
 *   main;handle_request             20
 *   main;idle_loop                  10   (all at t = 30 s) */
static struct fx *fx_new(bool batch, int limit)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	assert_int_equal(window_new_fx(60, FIXTURE_SEC, &fx->w), 0);
	fx->f_main = fixture_frame(fx->w, 0x1000, false, "server", "main", "server.c", 50, 0);
	fx->f_handle =
	    fixture_frame(fx->w, 0x2000, false, "server", "handle_request", "server.c", 88, 0);
	fx->f_parse =
	    fixture_frame(fx->w, 0x3000, false, "server", "parse_row", "parser.c", 212, 0);
	fx->f_idle = fixture_frame(fx->w, 0x4000, false, "server", "idle_loop", NULL, 0, 0);
	fixture_add(fx->w, 30, FIXTURE_PID, 70, 3, fx->f_main, fx->f_handle, fx->f_parse);
	fixture_add(fx->w, 30, FIXTURE_PID, 20, 2, fx->f_main, fx->f_handle);
	fixture_add(fx->w, 30, FIXTURE_PID, 10, 2, fx->f_main, fx->f_idle);

	fx->o.sort = SORT_OWN;
	fx->o.limit = limit;
	fx->o.batch = batch;
	fx->o.rate_hz = 99;
	fx->o.output_dir = ".";
	fx->m = (struct ui_model){.w = fx->w, .metrics = NULL, .pid = FIXTURE_PID};
	ui_init(&fx->ui, &fx->o, 1.0 / 99, &fx->m);
	fx->h = FIXTURE_HEADER(.cmdline = "./server", .nthreads = 1, .rate_hz = 99,
			       .achieved_hz = 99, .samples_window = 100, .samples_total = 100,
			       .window_s = 60, .span_s = 60);
	return fx;
}

static int setup(void **state)
{
	*state = fx_new(false, 30);
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ui_free(&fx->ui);
	window_free_fx(fx->w);
	free(fx);
	return 0;
}

static enum ui_request key(struct fx *fx, int k)
{
	return ui_key(&fx->ui, &fx->m, k, NOW);
}

/* ui's header fields, then the shown view drawn at COLS x ROWS. */
static const struct grid *draw(struct fx *fx)
{
	const struct grid *g;

	ui_header(&fx->ui, &fx->m, &fx->h, NOW);
	g = ui_draw(&fx->ui, &fx->m, &fx->h, COLS, ROWS);
	assert_non_null(g);
	assert_int_equal(g->w, COLS);
	assert_int_equal(g->h, ROWS);
	fixture_dump(g, "UI_DUMP");
	return g;
}

/* Key k (asking main for nothing), then the view it leaves drawn. */
static const struct grid *draw_after(struct fx *fx, int k)
{
	assert_int_equal(key(fx, k), UI_REQUEST_NONE);
	return draw(fx);
}

/* The first row of g that contains text, or -1. */
static int find_row(const struct grid *g, const char *text)
{
	for (int y = 0; y < g->h; y++)
		if (strstr(fixture_row(g, y), text))
			return y;
	return -1;
}

static void test_quit(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(key(fx, 'x'), UI_REQUEST_NONE);
	assert_int_equal(key(fx, 'q'), UI_REQUEST_QUIT);
	assert_int_equal(key(fx, 'Q'), UI_REQUEST_QUIT);
}

static void test_top_first(void **state)
{
	struct fx *fx = *state;
	const struct grid *g = draw(fx);

	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	assert_true(find_row(g, "%Own") >= 0);
	assert_true(find_row(g, "parse_row") > find_row(g, "%Own"));
	assert_null(fx->h.status);
	assert_false(fx->h.paused);
}

static void test_icicle_key(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	assert_int_equal(key(fx, '2'), UI_REQUEST_NONE);
	assert_int_equal(fx->ui.view, UI_VIEW_ICICLE);
	g = draw(fx);
	assert_int_equal(find_row(g, "%Own"), -1);
	/* Callers above callees. */
	assert_true(find_row(g, "handle_request") > 0);
	assert_true(find_row(g, "parse_row") > find_row(g, "handle_request"));
	assert_int_equal(key(fx, '1'), UI_REQUEST_NONE);
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	g = draw(fx);
	assert_true(find_row(g, "%Own") >= 0);
}

static void test_threads_without_metrics(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	g = draw_after(fx, '3');
	assert_non_null(fx->h.status);
	assert_string_equal(fx->h.status,
			    "no threads view here: a saved profile has no thread data");
	assert_true(find_row(g, "no threads view here") >= 0);
	/* The top view is shown in its place. */
	assert_true(find_row(g, "%Own") >= 0);
	/* The message lasts three seconds. */
	ui_header(&fx->ui, &fx->m, &fx->h, NOW + 4 * FIXTURE_SEC);
	assert_null(fx->h.status);
}

/* Key 4 without a live process (a saved profile): said, the top view
 * stays, and the memory attribution is not asked for; with a model that
 * has metrics, the memory view is asked for (main starts it) and drawn. */
static void test_memory_key(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	assert_int_equal(key(fx, '4'), UI_REQUEST_NONE);
	assert_true(ui_wants_memory(&fx->ui));
	g = draw(fx);
	assert_string_equal(fx->h.status, "no memory view here: a saved profile has no process");
	assert_true(find_row(g, "%Own") >= 0);
	/* Tab cycles through all four views. */
	assert_int_equal(key(fx, '1'), UI_REQUEST_NONE);
	for (int i = 1; i <= 4; i++) {
		assert_int_equal(key(fx, KEYS_TAB), UI_REQUEST_NONE);
		assert_int_equal(fx->ui.view, i % 4);
	}
}

static void test_pause(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	g = draw_after(fx, ' ');
	assert_true(ui_paused(&fx->ui));
	assert_true(fx->h.paused);
	assert_true(find_row(g, "[PAUSED]") >= 0);
	key(fx, ' ');
	assert_false(ui_paused(&fx->ui));
	g = draw(fx);
	assert_false(fx->h.paused);
	assert_int_equal(find_row(g, "[PAUSED]"), -1);
}

static void test_lines_toggle(void **state)
{
	struct fx *fx = *state;

	key(fx, 'l');
	draw(fx);
	assert_true(fx->h.lines);
	assert_string_equal(fx->h.status, "aggregating by file:line");
	key(fx, 'l');
	draw(fx);
	assert_false(fx->h.lines);
	assert_string_equal(fx->h.status, "aggregating by function");
}

static void test_help(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	g = draw_after(fx, '?');
	assert_int_equal(find_row(g, "stacktop help"), 0);
	assert_int_equal(find_row(g, "Press any key to return"), ROWS - 1);
	assert_int_equal(find_row(g, "parse_row"), -1); /* no table */
	/* The next key only closes it: '2' does not switch views. */
	assert_int_equal(key(fx, '2'), UI_REQUEST_NONE);
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	g = draw(fx);
	assert_int_equal(find_row(g, "stacktop help"), -1);
	assert_true(find_row(g, "parse_row") >= 0);
	/* ... except q, which also quits. */
	key(fx, 'h');
	assert_int_equal(key(fx, 'q'), UI_REQUEST_QUIT);
	assert_false(fx->ui.help);
}

static void test_enter_opens_icicle(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	draw(fx); /* the keys act on what was shown */
	assert_int_equal(fx->ui.top.selected, 0);
	assert_int_equal(fx->ui.top.selected_frame, fx->f_parse);
	assert_int_equal(key(fx, KEYS_ENTER), UI_REQUEST_NONE);
	assert_int_equal(fx->ui.view, UI_VIEW_ICICLE);
	g = draw(fx);
	assert_int_equal(fx->ui.icicle.selected_frame, fx->f_parse);
	assert_true(find_row(g, "selected: parse_row") >= 0);
}

static void test_reset(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;

	assert_int_equal(window_total(fx->w), 100);
	assert_int_equal(key(fx, 'r'), UI_REQUEST_NONE);
	assert_int_equal(window_total(fx->w), 0);
	g = draw(fx);
	assert_string_equal(fx->h.status, "window reset");
	assert_int_equal(find_row(g, "parse_row"), -1);
}

/* Batch text: header, the table's header row and its rows, no blank rows
 * after them, then one empty line. */
static void test_print(void **state)
{
	struct fx *fx = fx_new(true, 5);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	ui_header(&fx->ui, &fx->m, &fx->h, NOW);
	assert_true(fx->h.batch);
	ui_print(&fx->ui, &fx->m, &fx->h, out);
	fclose(out);
	if (getenv("UI_DUMP"))
		printf("%s", text);
	assert_non_null(strstr(text, "\n %Own"));
	assert_non_null(strstr(text, "parse_row"));
	assert_non_null(strstr(text, "idle_loop"));
	assert_true(len > 2);
	assert_string_equal(text + len - 2, "\n\n");
	assert_true(len < 3 || text[len - 3] != '\n');
	/* No line is only spaces, and none ends in one. */
	for (char *p = text; (p = strchr(p, '\n')) && p[1]; p++)
		assert_true(p == text || p[-1] != ' ');
	free(text);
	*state = fx;
}

/* The live diff: b marks seconds 25..34 (parse_row 70% under
 * handle_request, 20% under idle_loop), the callers then trade places for
 * seconds 41..50; D at 51 s shows handle_request's total starred down and
 * idle_loop's up, while parse_row, the leaf of both, is unchanged, with
 * the legend; the icicle colours each box by its call path: handle_request
 * and the parse_row under it blue, idle_loop and its parse_row red, main
 * (all of it both times) grey; D again is the top view. D without a
 * baseline only says to press b. */
static void test_live_diff(void **state)
{
	struct fx *fx = *state;
	const struct grid *g;
	const char *row;
	int x, y;
	int y0;

	assert_int_equal(key(fx, 'D'), UI_REQUEST_NONE);
	assert_false(fx->ui.diff_mode);
	ui_header(&fx->ui, &fx->m, &fx->h, NOW);
	assert_non_null(strstr(fx->h.status, "no baseline"));
	for (uint64_t t = 25; t < 35; t++) {
		fixture_add(fx->w, t, FIXTURE_PID, 70 + t % 3, 3, fx->f_main, fx->f_handle,
			    fx->f_parse);
		fixture_add(fx->w, t, FIXTURE_PID, 20, 3, fx->f_main, fx->f_idle, fx->f_parse);
	}
	assert_int_equal(ui_key(&fx->ui, &fx->m, 'b', 35 * FIXTURE_SEC), UI_REQUEST_NONE);
	assert_non_null(fx->ui.baseline);
	for (uint64_t t = 41; t < 51; t++) {
		fixture_add(fx->w, t, FIXTURE_PID, 20 + t % 3, 3, fx->f_main, fx->f_handle,
			    fx->f_parse);
		fixture_add(fx->w, t, FIXTURE_PID, 70, 3, fx->f_main, fx->f_idle, fx->f_parse);
	}
	assert_int_equal(key(fx, 'D'), UI_REQUEST_NONE);
	assert_true(fx->ui.diff_mode);
	ui_header(&fx->ui, &fx->m, &fx->h, 51 * FIXTURE_SEC);
	g = ui_draw(&fx->ui, &fx->m, &fx->h, COLS, ROWS);
	fixture_dump(g, "UI_DUMP");
	assert_true(find_row(g, " Base%   Now%   Delta   Base%   Now%   Delta   Function") >= 0);
	assert_true(find_row(g, "legend: grew shrank not significant") >= 0);
	assert_true((y = find_row(g, "*  handle_request")) >= 0);
	assert_non_null(strstr(fixture_row(g, y), "-"));
	assert_true((y = find_row(g, "*  idle_loop")) >= 0);
	assert_non_null(strstr(fixture_row(g, y), "+"));
	assert_true((y = find_row(g, "  parse_row")) >= 0);
	assert_null(strchr(fixture_row(g, y), '*'));
	assert_true(find_row(g, "Welch") >= 0);
	/* At 80 columns the line says what a star means, whole (issue 24:
	 * "Welch per second (9 vs 10), Ho"). */
	g = ui_draw(&fx->ui, &fx->m, &fx->h, 80, 24);
	fixture_dump(g, "UI_DUMP");
	y0 = find_row(g, "diff: baseline");
	assert_true(y0 >= 0);
	assert_string_equal(fixture_row(g, y0),
			    "diff: baseline (10 s, 16 s ago) vs last 10 s: * p < "
			    "0.05, Welch 9 vs 9 seconds");
	/* the icicle in diff mode, by call path */
	assert_int_equal(key(fx, '2'), UI_REQUEST_NONE);
	ui_header(&fx->ui, &fx->m, &fx->h, 51 * FIXTURE_SEC);
	g = ui_draw(&fx->ui, &fx->m, &fx->h, COLS, ROWS);
	fixture_dump(g, "UI_DUMP");
	assert_true(find_row(g, "diff: grew shrank") >= 0);
	/* each caller's box, and the parse_row box under it (2 columns in) */
	const struct {
		const char *name;
		int color;
	} boxes[] = {{"handle_request", GRID_C_BLUE}, {"idle_loop", GRID_C_RED}};
	int yp = find_row(g, "parse_row");
	assert_true(yp >= 0);
	for (size_t i = 0; i < sizeof(boxes) / sizeof(boxes[0]); i++) {
		assert_true((y = find_row(g, boxes[i].name)) >= 0);
		row = fixture_row(g, y);
		x = (int)(strstr(row, boxes[i].name) - row) + 2;
		assert_int_equal(GRID_COLOR_OF(((struct grid *)g)->cells[y * g->w + x].attr),
				 boxes[i].color);
		assert_int_equal(GRID_COLOR_OF(((struct grid *)g)->cells[yp * g->w + x].attr),
				 boxes[i].color);
	}
	y = find_row(g, "main");
	row = fixture_row(g, y);
	x = (int)(strstr(row, "main") - row);
	assert_true(((struct grid *)g)->cells[y * g->w + x].attr & GRID_DIM);
	assert_int_equal(key(fx, '1'), UI_REQUEST_NONE);
	g = draw_after(fx, 'D');
	assert_true(find_row(g, "%Own") >= 0);
	assert_int_equal(key(fx, 'B'), UI_REQUEST_NONE);
	assert_null(fx->ui.baseline);
}

/* a: the top view's row is annotated (its keys come first then, the
 * global ones it leaves still work, Esc closes it); not in diff mode; the
 * lower-case aliases of the global keys act as their keys. */
static void test_annotate_key(void **state)
{
	struct fx *fx = *state;

	draw(fx);
	assert_int_equal(key(fx, 'a'), UI_REQUEST_NONE);
	assert_true(fx->ui.ann.open);
	assert_int_equal(key(fx, '2'), UI_REQUEST_NONE); /* stops at annotate */
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	key(fx, ' ');
	assert_true(ui_paused(&fx->ui)); /* goes on */
	key(fx, KEYS_ESC);
	assert_false(fx->ui.ann.open);
	key(fx, 'k');
	assert_true(fx->ui.top.hide_kernel);
	key(fx, 'K');
	assert_false(fx->ui.top.hide_kernel);
	key(fx, 'b');
	key(fx, 'D');
	assert_true(fx->ui.diff_mode);
	key(fx, 'a');
	assert_false(fx->ui.ann.open);
	assert_int_equal(key(fx, 'Q'), UI_REQUEST_QUIT);
}

/* ---- the whole machine ---- */

struct mfx {
	struct window *w;
	struct machine *mach;
	struct ui_config o;
	struct ui_model m;
	struct ui ui;
	struct view_header h;
};

/* A frame of pid named func in module mod. */
static uint32_t pframe(struct window *w, int pid, uint64_t pc, const char *mod, const char *func)
{
	struct sym_info si = {.func = func, .module = mod};
	int64_t id = frames_preset(window_frames_mut(w), pid, pc, false, &si, false);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* alpha (100): main;crunch 60, beta (200): main;wait_io 30, both under
 * their root frames; the machine knows both (and cron, 300, no samples). */
static struct mfx *mfx_new(bool batch, bool view_set)
{
	struct mfx *fx = calloc(1, sizeof(*fx));
	struct machine_config mc = {.history_s = 60,
				    .busy_floor_pct = 5,
				    .stuck_s = 5,
				    .reads_per_tick = 256,
				    .task_reads_per_tick = 256};
	const struct {
		int pid;
		const char *comm, *func;
		unsigned n;
	} ps[] = {
	    {100, "alpha", "crunch", 60}, {200, "beta", "wait_io", 30}, {300, "cron", NULL, 0}};

	assert_non_null(fx);
	assert_int_equal(window_new_fx(60, FIXTURE_SEC, &fx->w), 0);
	assert_int_equal(machine_new(&mc, &fx->mach), 0);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct machine_reading r = {.pid = ps[i].pid,
					    .ppid = 1,
					    .state = 'S',
					    .cpu_s = 0,
					    .rss = 1 << 20,
					    .nthreads = 1};
		snprintf(r.comm, sizeof(r.comm), "%s", ps[i].comm);
		assert_int_equal(
		    machine_push(fx->mach, 1, &r, 0, "/system.slice/x.service", ps[i].comm), 0);
		if (!ps[i].func)
			continue;
		int64_t root = frames_process(window_frames_mut(fx->w), ps[i].pid, ps[i].comm);
		assert_true(root >= 0);
		fixture_add(fx->w, 30, ps[i].pid, ps[i].n, 3, (uint32_t)root,
			    pframe(fx->w, ps[i].pid, 0x1000, ps[i].comm, "main"),
			    pframe(fx->w, ps[i].pid, 0x2000, ps[i].comm, ps[i].func));
	}
	machine_eval(fx->mach);
	fx->o = (struct ui_config){.sort = SORT_OWN,
				   .limit = 10,
				   .batch = batch,
				   .rate_hz = 99,
				   .output_dir = ".",
				   .machine = true,
				   .view_set = view_set};
	fx->m = (struct ui_model){.w = fx->w, .machine = fx->mach};
	ui_init(&fx->ui, &fx->o, 1.0 / 99, &fx->m);
	fx->h = (struct view_header){.mode = "cpu",
				     .rate_hz = 99,
				     .samples_window = 90,
				     .window_s = 60,
				     .span_s = 30,
				     .batch = batch};
	return fx;
}

static void mfx_free(struct mfx *fx)
{
	ui_free(&fx->ui);
	machine_free(fx->mach);
	window_free_fx(fx->w);
	free(fx);
}

static const struct grid *mdraw(struct mfx *fx)
{
	const struct grid *g;

	ui_header(&fx->ui, &fx->m, &fx->h, NOW);
	g = ui_draw(&fx->ui, &fx->m, &fx->h, COLS, ROWS);
	fixture_dump(g, "UI_DUMP");
	return g;
}

static enum ui_request mkey(struct mfx *fx, int k)
{
	return ui_key(&fx->ui, &fx->m, k, NOW);
}

/* The process table first; Enter on a process: every view shows only it
 * (the top view opens, the icicle without its root frame, the header says
 * so); Esc with nothing else to undo: the table and the whole machine
 * again; 0 from any view: the table; Tab passes by it. */
static void test_machine_narrow(void **state)
{
	struct mfx *fx = mfx_new(false, false);
	const struct grid *g;
	int pid;

	(void)state;
	assert_int_equal(fx->ui.view, UI_VIEW_PROCS);
	g = mdraw(fx);
	assert_non_null(strstr(fixture_row(g, 0), "whole machine \xc2\xb7 "));
	assert_true(find_row(g, "  PID USER") >= 0);
	assert_true(find_row(g, "crunch") >= 0); /* alpha's hottest */
	assert_true(find_row(g, "wait_io") >= 0);
	assert_true(find_row(g, "cron") >= 0);
	pid = fx->ui.procs.selected_pid;
	assert_true(pid == 100 || pid == 200 || pid == 300);
	for (int i = 0; i < 3 && fx->ui.procs.selected_pid != 200; i++) { /* select beta */
		mkey(fx, KEYS_DOWN);
		mdraw(fx);
	}
	assert_int_equal(fx->ui.procs.selected_pid, 200);
	mkey(fx, KEYS_ENTER);
	assert_int_equal(ui_pid(&fx->ui), 200);
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	g = mdraw(fx);
	assert_non_null(strstr(fixture_row(g, 0), "pid 200 beta (Esc: all)"));
	assert_true(find_row(g, "wait_io") >= 0);
	assert_int_equal(find_row(g, "crunch"), -1);
	assert_int_equal(find_row(g, "Process"), -1);	 /* one process: no column */
	assert_int_equal(find_row(g, "beta (200)"), -1); /* the root is no row */
	mkey(fx, '2');
	g = mdraw(fx);
	assert_true(find_row(g, "wait_io") >= 0);
	assert_int_equal(find_row(g, "crunch"), -1);
	assert_int_equal(find_row(g, "beta (200)"), -1); /* no root frame box */
	assert_true(find_row(g, "[main") >= 0);
	mkey(fx, KEYS_ESC); /* the icicle has nothing to undo */
	assert_int_equal(ui_pid(&fx->ui), 0);
	assert_int_equal(fx->ui.view, UI_VIEW_PROCS);
	g = mdraw(fx);
	assert_non_null(strstr(fixture_row(g, 0), "whole machine"));

	/* the top view of the whole machine: a PROCESS column */
	mkey(fx, '1');
	g = mdraw(fx);
	assert_true(find_row(g, "Process") >= 0);
	assert_true(find_row(g, "alpha 100") >= 0);
	assert_true(find_row(g, "beta 200") >= 0);
	mkey(fx, KEYS_ESC); /* not narrowed: stays */
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	mkey(fx, '0');
	assert_int_equal(fx->ui.view, UI_VIEW_PROCS);
	mkey(fx, KEYS_TAB);
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	mfx_free(fx);
}

/* Key 0 without the whole machine: a sentence, the view stays; Tab never
 * lands on the process table. */
static void test_zero_elsewhere(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(key(fx, '0'), UI_REQUEST_NONE);
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	draw(fx);
	assert_string_equal(fx->h.status,
			    "the process table is for the whole machine: stacktop -a");
	for (int i = 0; i < 8; i++) {
		key(fx, KEYS_TAB);
		assert_true(fx->ui.view != UI_VIEW_PROCS);
	}
}

/* Batch, whole machine: the process table, then the top view with its
 * PROCESS column; --view given: that view only. */
static void test_machine_print(void **state)
{
	struct mfx *fx = mfx_new(true, false);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	const char *top;

	(void)state;
	assert_non_null(out);
	ui_header(&fx->ui, &fx->m, &fx->h, NOW);
	ui_print(&fx->ui, &fx->m, &fx->h, out);
	fclose(out);
	if (getenv("UI_DUMP"))
		printf("%s", text);
	top = fixture_in_order(text, "  PID USER", "%Own");
	assert_non_null(strstr(top, "alpha 100"));
	assert_null(strstr(text, "Enter: this process")); /* no footer */
	free(text);
	mfx_free(fx);

	fx = mfx_new(true, true); /* --view top */
	assert_int_equal(fx->ui.view, UI_VIEW_TOP);
	mfx_free(fx);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(NULL, NULL, T(test_quit), T(test_top_first), T(test_icicle_key),
	  T(test_threads_without_metrics), T(test_memory_key), T(test_pause), T(test_lines_toggle),
	  T(test_help), T(test_enter_opens_icicle), T(test_reset), T(test_live_diff),
	  T(test_annotate_key), cmocka_unit_test_teardown(test_print, teardown),
	  TEST(test_machine_narrow), T(test_zero_elsewhere), TEST(test_machine_print))
