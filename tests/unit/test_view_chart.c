/* Unit tests for view_chart: the CPU and memory charts, the alerts line
 * and sparklines rendered into grids of several sizes, ASCII and UTF-8,
 * compared as text line by line; labels and units present; nothing drawn
 * outside the rectangle. Set VIEW_CHART_DUMP=1 to print the grids. */
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

#include "stacktop/ui/view_chart.h"

#define MIB (1024ull * 1024ull)

/* Expected renderings (regenerate with VIEW_CHART_DUMP=1). */
/* clang-format off */
/* const 60x5 ascii */
static const char *const const_60x5_ascii[] = {
	"      60% |______________________________ floor  50%",
	"          |############################## base   50%",
	"          |############################## now    50%",
	"          |############################## peak   50%",
	"CPU %core +-60s-----------------------now",
};

/* const 80x3 utf8 */
static const char *const const_80x3_utf8[] = {
	"      60% |______________________________ floor  50%",
	"          |██████████████████████████████ base   50%",
	"CPU %core +-60s-----------------------now now    50%",
};

/* step 100x8 ascii */
static const char *const step_100x8_ascii[] = {
	"     100% |                    ####################                     now    20%",
	"          |                    ####################                     peak  100%",
	"          |                    ####################",
	"          |                    ####################",
	"          |- - - - - - - - - - ####################- - - - - - - - - -  base   40%",
	"          |########################################____________________ floor  20%",
	"          |############################################################",
	"CPU %core +-60s-----------------------------------------------------now",
};

/* step 100x8 utf8 */
static const char *const step_100x8_utf8[] = {
	"     100% |                    ████████████████████                     now    20%",
	"          |                    ████████████████████                     peak  100%",
	"          |                    ████████████████████",
	"          |                    ████████████████████",
	"          |╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌████████████████████╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌ base   40%",
	"          |████████████████████████████████████████____________________ floor  20%",
	"          |████████████████████████████████████████████████████████████",
	"CPU %core +-60s-----------------------------------------------------now",
};

/* step 200x12 ascii */
static const char *const step_200x12_ascii[] = {
	"     100% |                    ####################                     now    20%",
	"          |                    ####################                     peak  100%",
	"          |                    ####################",
	"          |                    ####################",
	"          |                    ####################",
	"          |                    ####################",
	"          |- - - - - - - - - - ####################- - - - - - - - - -  base   40%",
	"          |########################################",
	"          |########################################____________________ floor  20%",
	"          |############################################################",
	"          |############################################################",
	"CPU %core +-60s-----------------------------------------------------now",
};

/* step 80x3 ascii */
static const char *const step_80x3_ascii[] = {
	"     100% |          ##########           base   40%",
	"          |__________##########__________ floor  20%",
	"CPU %core +-60s-----------------------now now    20%",
};

/* step 60x5 utf8 */
static const char *const step_60x5_utf8[] = {
	"     100% |          ██████████           now    20%",
	"          |          ██████████           base   40%",
	"          |__________██████████__________ floor  20%",
	"          |████████████████████▆▆▆▆▆▆▆▆▆▆ peak  100%",
	"CPU %core +-60s-----------------------now",
};

/* mem 120x6 ascii */
static const char *const mem_120x6_ascii[] = {
	"MEM 179 MiB RSS  STAIRS, leak suspected: +60 MiB/min, no drops in 59s  (anon 159 MiB, file 20 MiB)",
	"limit 200 MiB (cgroup) reached in ~21s at this slope; anonymous memory grows",
	"  200 MiB |============================================================ limit 200 MiB",
	"          |:::######################################################### now   179 MiB",
	"      0 B |############################################################ peak  179 MiB",
	"RSS       +-60s-----------------------------------------------------now low   120 MiB",
};

/* mem 120x8 utf8 */
static const char *const mem_120x8_utf8[] = {
	"MEM 179 MiB RSS  STAIRS, leak suspected: +60 MiB/min, no drops in 59s  (anon 159 MiB, file 20 MiB)",
	"limit 200 MiB (cgroup) reached in ~21s at this slope; anonymous memory grows",
	"  200 MiB |════════════════════════════════════════════════════════════ limit 200 MiB",
	"          |   ▁▁▁▁▁▂▂▂▂▂▃▃▃▃▃▄▄▄▄▄▅▅▅▅▅▆▆▆▆▆▇▇▇▇▇██████████████████████ now   179 MiB",
	"          |████████████████████████████████████████████████████████████ peak  179 MiB",
	"          |████████████████████████████████████████████████████████████ low   120 MiB",
	"      0 B |████████████████████████████████████████████████████████████",
	"RSS       +-60s-----------------------------------------------------now",
};

/* mem 100x4 ascii */
static const char *const mem_100x4_ascii[] = {
	"MEM 179 MiB RSS  STAIRS, leak suspected: +60 MiB/min, no drops in 59s  (anon 159 MiB, file 20 MiB)",
	"  200 MiB |============================================================ limit 200 MiB",
	"      0 B |############################################################ now   179 MiB",
	"RSS       +-60s-----------------------------------------------------now peak  179 MiB",
};

/* mem 80x4 ascii */
static const char *const mem_80x4_ascii[] = {
	"MEM 179 MiB RSS  STAIRS, leak suspected: +60 MiB/min, no drops in 59s",
	"  200 MiB |============================== limit 200 MiB",
	"      0 B |############################## now   179 MiB",
	"RSS       +-60s-----------------------now peak  179 MiB",
};

/* mem 100x2 ascii */
static const char *const mem_100x2_ascii[] = {
	"MEM 179 MiB RSS  STAIRS, leak suspected: +60 MiB/min, no drops in 59s  (anon 159 MiB, file 20 MiB)",
	"limit 200 MiB (cgroup) reached in ~21s at this slope; anonymous memory grows",
};

/* mem far limit */
static const char *const mem_far_limit[] = {
	"MEM 179 MiB RSS  STAIRS, leak suspected: +60 MiB/min, no drops in 59s  (anon 159 MiB, file 20 MiB)",
	"limit 8.0 GiB (RAM) reached in ~2h14m at this slope; anonymous memory grows",
	"  180 MiB |                                            ......:::::::### limit 8.0 GiB",
	"          |                        ......:::::::####################### now   179 MiB",
	"  120 MiB | .........:::::::########################################### peak  179 MiB",
	"RSS       +-60s-----------------------------------------------------now low   120 MiB",
};
/* clang-format on */

static void dump(const struct grid *g)
{
	char buf[4096];
	if (!getenv("VIEW_CHART_DUMP"))
		return;
	for (int y = 0; y < g->h; y++) {
		grid_row_text(g, y, buf, sizeof(buf));
		fprintf(stderr, "\t\"%s\",\n", buf);
	}
	fprintf(stderr, "\n");
}

static void expect_rows(const struct grid *g, const char *const *rows, int n)
{
	char buf[4096];
	dump(g);
	assert_int_equal(g->h, n);
	for (int y = 0; y < n; y++) {
		assert_true(grid_row_text(g, y, buf, sizeof(buf)) >= 0);
		assert_string_equal(buf, rows[y]);
	}
}

static void init_metrics(struct metrics *m, unsigned window_s)
{
	struct metrics_config c;
	metrics_config_default(&c);
	c.window_s = window_s;
	c.baseline_period_s = 3600; /* the first window, once complete */
	assert_int_equal(metrics_init(m, 0, &c), 0);
}

/* 50% for a minute: floor 50%, baseline 50%. */
static void mk_const(struct metrics *m)
{
	init_metrics(m, 60);
	for (int i = 0; i < 60; i++)
		metrics_push_process(m, 100 + i, 50, 100 * MIB, 0, 0);
	metrics_eval(m, 159);
}

/* 40% (baseline taken here), then 100%, then 20% (the floor). */
static void mk_step(struct metrics *m)
{
	init_metrics(m, 60);
	for (int i = 0; i < 60; i++) {
		metrics_push_process(m, 100 + i, i < 20 ? 40 : i < 40 ? 100 : 20, 100 * MIB, 0, 0);
		metrics_eval(m, 100 + i);
		if (i == 19)
			metrics_baseline_now(m);
	}
}

/* RSS 120 MiB + 1 MiB/s (anon) for a minute, limit 200 MiB. */
static void mk_mem(struct metrics *m)
{
	init_metrics(m, 60);
	for (int i = 0; i < 60; i++)
		metrics_push_process(m, 100 + i, 50, (100 + (uint64_t)i) * MIB, 20 * MIB, 0);
	m->mem_limit = 200 * MIB;
	m->mem_limit_src = "cgroup";
	metrics_eval(m, 159);
}

typedef int (*chart_fn)(struct grid *, int, int, int, int, const struct metrics *, bool);

static void render(chart_fn fn, const struct metrics *m, int w, int h, bool utf8,
		   const char *const *rows, int n)
{
	struct grid g;
	assert_int_equal(grid_init(&g, w, h), 0);
	assert_int_equal(fn(&g, 0, 0, w, h, m, utf8), 0);
	expect_rows(&g, rows, n);
	grid_free(&g);
}

#define RENDER(fn, m, w, h, utf8, rows)                                                            \
	render(fn, m, w, h, utf8, rows, (int)(sizeof(rows) / sizeof(rows[0])))

static void test_cpu_const(void **state)
{
	struct metrics m;
	mk_const(&m);
	assert_float_equal(m.cpu_floor, 50, 1e-9);
	RENDER(view_chart_cpu, &m, 60, 5, false, const_60x5_ascii);
	RENDER(view_chart_cpu, &m, 80, 3, true, const_80x3_utf8);
	metrics_free(&m);
}

static void test_cpu_step(void **state)
{
	struct metrics m;
	mk_step(&m);
	assert_float_equal(m.cpu_baseline, 40, 1e-9);
	assert_float_equal(m.cpu_floor, 20, 1e-9);
	RENDER(view_chart_cpu, &m, 100, 8, false, step_100x8_ascii);
	RENDER(view_chart_cpu, &m, 100, 8, true, step_100x8_utf8);
	RENDER(view_chart_cpu, &m, 200, 12, false, step_200x12_ascii);
	RENDER(view_chart_cpu, &m, 80, 3, false, step_80x3_ascii);
	RENDER(view_chart_cpu, &m, 60, 5, true, step_60x5_utf8);
	metrics_free(&m);
}

/* Narrowed to a thread, the charts say they are process-wide; a floor (the
 * p10 of the window) above now says what it is. */
static void test_cpu_scope_and_floor(void **state)
{
	struct metrics m;
	struct grid g;
	char buf[512];

	mk_step(&m);
	assert_int_equal(grid_init(&g, 80, 6), 0);
	assert_int_equal(view_chart_cpu_scoped(&g, 0, 0, 80, 1, &m, false, true), 0);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(buf, "CPU (process) now 20%  peak 100%  base 40%  floor 20%");
	assert_int_equal(view_chart_mem_scoped(&g, 0, 1, 80, 1, &m, false, true), 0);
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_true(!strncmp(buf, "MEM (process) ", 14));
	grid_clear(&g);
	assert_int_equal(view_chart_cpu_scoped(&g, 0, 0, 80, 5, &m, false, true), 0);
	dump(&g);
	grid_row_text(&g, 4, buf, sizeof(buf));
	assert_non_null(strstr(buf, " process-wide "));
	/* Not narrowed: no note. */
	grid_clear(&g);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 80, 5, &m, false), 0);
	grid_row_text(&g, 4, buf, sizeof(buf));
	assert_null(strstr(buf, "process"));

	/* Just dropped: now 5%, floor 20%. */
	m.cpu_now = 5;
	view_chart_cpu_text(&m, false, buf, sizeof(buf));
	assert_string_equal(buf, "CPU now 5%  peak 100%  base 40%  floor 20% (p10 of 60s)");
	grid_clear(&g);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 80, 5, &m, false), 0);
	dump(&g);
	bool said = false;
	for (int y = 0; y < 5; y++) {
		grid_row_text(&g, y, buf, sizeof(buf));
		said = said || strstr(buf, "p10 of 60s");
	}
	assert_true(said);

	/* The target exited: its last second is no live figure (issue 17). */
	m.exited = true;
	view_chart_cpu_text(&m, false, buf, sizeof(buf));
	assert_string_equal(buf, "CPU exited  peak 100%  base 40%  floor 20%");
	grid_clear(&g);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 80, 5, &m, false), 0);
	said = false;
	for (int y = 0; y < 5; y++) {
		grid_row_text(&g, y, buf, sizeof(buf));
		said = said || strstr(buf, "exited");
	}
	assert_true(said);
	grid_free(&g);
	metrics_free(&m);
}

static void test_cpu_short_and_empty(void **state)
{
	struct metrics m;
	struct grid g;
	char buf[512];

	mk_step(&m);
	assert_int_equal(grid_init(&g, 80, 2), 0);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 80, 2, &m, false), 0);
	dump(&g);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(buf, "CPU now 20%  peak 100%  base 40%  floor 20%");
	grid_row_text(&g, 1, buf, sizeof(buf));
	/* 60 points in 80 columns: right-aligned, 40% is ':' of a 100% max;
	 * labelled, so under a MEM line it does not read as memory's. */
	assert_string_equal(
	    buf,
	    "CPU last 60s        ::::::::::::::::::::####################....................");
	grid_free(&g);
	metrics_free(&m);

	/* No data yet: the frame, the axis and a note. */
	init_metrics(&m, 60);
	metrics_eval(&m, 0);
	assert_int_equal(grid_init(&g, 80, 4), 0);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 80, 4, &m, false), 0);
	dump(&g);
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_non_null(strstr(buf, "(collecting)"));
	grid_row_text(&g, 3, buf, sizeof(buf));
	/* 80 - 11 - 11 = 58 columns for 60 s: groups of 2 s, 30 columns. */
	assert_string_equal(buf, "CPU %core +-60s-----------------------now");
	grid_free(&g);
	/* Nothing measured yet is "measuring", never a 0% or 0 B that reads
	 * as a figure (issue 24 item 4). */
	view_chart_cpu_text(&m, false, buf, sizeof(buf));
	assert_string_equal(buf, "CPU measuring");
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_string_equal(buf, "MEM measuring");
	metrics_free(&m);
}

/* A window wider than the plot: groups of seconds, each the maximum of
 * its group, so a single one-second burst still shows. */
static void test_cpu_aggregated(void **state)
{
	struct metrics m;
	struct grid g;
	char buf[512];

	init_metrics(&m, 600);
	for (int i = 0; i < 600; i++)
		metrics_push_process(&m, i, i == 300 ? 100 : 0, MIB, 0, 0);
	metrics_eval(&m, 599);
	assert_int_equal(grid_init(&g, 80, 4), 0);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 80, 4, &m, false), 0);
	dump(&g);
	/* 80 - 11 - 11 = 58 columns: groups of 11 s, 55 columns. */
	for (int y = 0; y < 3; y++) {
		grid_row_text(&g, y, buf, sizeof(buf));
		assert_int_equal(strchr(buf, '#') - buf, 11 + 55 - 1 - (599 - 300) / 11);
		assert_null(strchr(strchr(buf, '#') + 1, '#')); /* exactly one column */
	}
	grid_row_text(&g, 3, buf, sizeof(buf));
	assert_true(!strncmp(buf, "CPU %core +-10m---", 18));
	assert_non_null(strstr(buf, "now"));
	grid_free(&g);
	metrics_free(&m);
}

static void test_mem(void **state)
{
	struct metrics m;
	struct grid g;
	char buf[512];

	mk_mem(&m);
	assert_int_equal(m.mem_trend.kind, SERIES_STAIRS);
	RENDER(view_chart_mem, &m, 120, 6, false, mem_120x6_ascii);
	RENDER(view_chart_mem, &m, 120, 8, true, mem_120x8_utf8);
	RENDER(view_chart_mem, &m, 100, 4, false, mem_100x4_ascii);
	RENDER(view_chart_mem, &m, 100, 2, false, mem_100x2_ascii);
	/* 80 columns: the breakdown left out whole, never "(anon 159". */
	RENDER(view_chart_mem, &m, 80, 4, false, mem_80x4_ascii);
	/* The alert at 80 columns: the limit first, then who holds it, each
	 * whole ("limit in ~3h21m: cache_put.constprop.0 (lea"). */
	assert_true(m.alert_stairs);
	m.mem_holder = "cache_put.constprop.0";
	assert_int_equal(grid_init(&g, 80, 1), 0);
	assert_int_equal(view_alerts_render(&g, 0, &m), 1);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(
	    buf, "! MEM STAIRS +60 MiB/min, limit in ~21s: held by cache_put.constprop.0");
	grid_free(&g);
	m.mem_holder = NULL;
	/* The whole machine's figures: memory in use, no anon/file split. */
	m.box = true;
	view_chart_mem_text(&m, true, buf, sizeof(buf));
	assert_non_null(strstr(buf, "MEM (whole machine) "));
	assert_non_null(strstr(buf, " used  STAIRS"));
	assert_null(strstr(buf, "anon"));
	m.box = false;
	/* h == 1: the verdict line only. */
	assert_int_equal(grid_init(&g, 100, 1), 0);
	assert_int_equal(view_chart_mem(&g, 0, 0, 100, 1, &m, false), 0);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(buf, mem_100x2_ascii[0]);
	grid_free(&g);
	/* A limit far above the peak: no line, the scale follows the data. */
	m.mem_limit = 8192 * MIB;
	m.mem_limit_src = "RAM";
	metrics_eval(&m, 159);
	RENDER(view_chart_mem, &m, 120, 6, false, mem_far_limit);
	metrics_free(&m);
}

static void test_mem_verdicts(void **state)
{
	struct metrics m;
	struct grid g;
	char buf[512];

	/* Rollercoaster: 300 MiB rising 4 MiB/s for a minute, then freed. */
	init_metrics(&m, 600);
	for (int i = 0; i < 600; i++)
		metrics_push_process(
		    &m, i, 50, 300 * MIB + (uint64_t)(i % 120 < 60 ? i % 120 : 0) * 4 * MIB, 0, 0);
	metrics_eval(&m, 599);
	assert_int_equal(grid_init(&g, 120, 1), 0);
	view_chart_mem(&g, 0, 0, 120, 1, &m, false);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(
	    buf, "MEM 300 MiB RSS  ROLLERCOASTER, healthy: peaks 536 MiB, drops every ~2m  "
		 "(anon 300 MiB, file 0 B)");
	metrics_free(&m);

	/* Flat, with shared memory worth naming. */
	init_metrics(&m, 60);
	for (int i = 0; i < 60; i++)
		metrics_push_process(&m, i, 50, 500 * MIB, 30 * MIB, 40 * MIB);
	metrics_eval(&m, 59);
	grid_clear(&g);
	view_chart_mem(&g, 0, 0, 120, 1, &m, false);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(buf,
			    "MEM 570 MiB RSS  FLAT: no trend over 59s  (anon 500 MiB, file 30 MiB, "
			    "shmem 40 MiB)");
	metrics_free(&m);

	/* 20 s of climbing at 2 MiB/s: too short to call stairs, but the
	 * chart beside it goes up, so the line must not say FLAT. */
	init_metrics(&m, 60);
	for (int i = 0; i < 20; i++)
		metrics_push_process(&m, i, 50, 10 * MIB + (uint64_t)i * 2 * MIB, 0, 0);
	metrics_eval(&m, 19);
	assert_true(m.mem_rising);
	grid_clear(&g);
	view_chart_mem(&g, 0, 0, 120, 1, &m, false);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(buf, "MEM 48 MiB RSS  RISING, too soon to call a leak: +120 MiB/min "
				 "over 19s  (anon 48 MiB, file 0 B)");
	/* At 80 columns the verdict word is whole (issue 17: "RISING, too s"). */
	grid_free(&g);
	assert_int_equal(grid_init(&g, 80, 1), 0);
	view_chart_mem(&g, 0, 0, 80, 1, &m, false);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_true(!strncmp(
	    buf, "MEM 48 MiB RSS  RISING, too soon to call a leak: +120 MiB/min over 19s", 68));
	grid_free(&g);
	metrics_free(&m);
}

/* A minute of a worker bursting to 80% 3 s in 10 over 20% of a core,
 * in ~100 ms steps too; with poller, the 20% is a thread of its own. */
static void mk_bursts(struct metrics *m, bool poller)
{
	init_metrics(m, 60);
	for (int i = 0; i < 60; i++) {
		double w = i % 10 < 3 ? 80 : 0;
		metrics_push_thread(m, i, 100, "worker", w ? 'R' : 'S', w);
		if (poller)
			metrics_push_thread(m, i, 101, "poller", 'S', 20);
		metrics_push_process(m, i, 20 + w, MIB, 0, 0);
		for (int k = 0; k < 10; k++) {
			double ft = i - 0.9 + k * 0.1;
			metrics_push_thread_fine(m, ft, 100, w, w ? 'R' : 'S');
			if (poller)
				metrics_push_thread_fine(m, ft, 101, 20, 'S');
			metrics_push_fine(m, ft, 20 + w);
		}
		metrics_eval(m, i);
	}
}

static void test_alerts(void **state)
{
	struct metrics m;
	struct grid g;
	char buf[512];

	assert_int_equal(grid_init(&g, 100, 3), 0);
	mk_const(&m);
	assert_int_equal(view_alerts_render(&g, 1, &m), 0);
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_string_equal(buf, "");
	metrics_free(&m);

	/* Bursts over a 20% floor: the busy-floor alert, full width; with
	 * no thread measured that holds it, the process's level. The bursts
	 * come every 10 s: the rhythm alert too, after it, with the facts
	 * that fit whole in 100 columns. */
	mk_bursts(&m, false);
	assert_int_equal(view_alerts_render(&g, 1, &m), 1);
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_string_equal(buf, "! BUSY FLOOR 20% of a core in the pauses between bursts   ! CPU "
				 "spikes every 10 s (+-1 s), 3 s each");
	metrics_free(&m);
	/* With the poller that holds it: the poller, its floor column's figure. */
	mk_bursts(&m, true);
	assert_int_equal(view_alerts_render(&g, 1, &m), 1);
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_string_equal(buf, "! BUSY FLOOR in the pauses between bursts: poller (101) 20%   ! "
				 "CPU spikes every 10 s (+-1 s)");
	assert_int_equal(GRID_COLOR_OF(grid_at(&g, 99, 1)->attr), GRID_C_ALERT);
	assert_int_equal(GRID_COLOR_OF(grid_at(&g, 0, 1)->attr), GRID_C_ALERT);
	assert_int_equal(GRID_COLOR_OF(grid_at(&g, 0, 0)->attr), GRID_C_DEFAULT);
	assert_int_equal(view_alerts_render(&g, 3, &m), 0); /* off the grid */
	grid_free(&g);
	metrics_free(&m);
}

/* 20% with 3 s at 100% every 15 s, for 100 s (window 60 s: the rhythm is
 * read from the longer CPU memory): the rhythm alert, every fact; in 40
 * columns the facts that fit whole (38 after the "! "). Steady 100%: none. */
static void test_alert_rhythm(void **state)
{
	struct metrics m;
	char buf[512];

	init_metrics(&m, 60);
	for (int i = 0; i < 100; i++) {
		metrics_push_process(&m, 100 + i, (i + 10) % 15 < 3 ? 100 : 20, 100 * MIB, 0, 0);
		metrics_eval(&m, 100 + i);
	}
	assert_true(m.cpu.len == 60 && m.cpu_long.len == 100);
	view_chart_alerts_fit(&m, 0, buf, sizeof(buf));
	assert_string_equal(buf, "! CPU spikes every 15 s (+-1 s), 3 s each, to 100% from 20%");
	view_chart_alerts_fit(&m, 40, buf, sizeof(buf));
	assert_string_equal(buf, "! CPU spikes every 15 s (+-1 s)");
	/* What rises in the spikes (model/spikes), sanitized; GC first when
	 * the top riser is the collector; a second name only after the first. */
	m.nrisers = 2;
	snprintf(m.risers[0].func, sizeof(m.risers[0].func), "sweep\x1b[2J");
	m.risers[0].pts = 70.4;
	snprintf(m.risers[1].func, sizeof(m.risers[1].func), "mark");
	m.risers[1].pts = 12;
	view_chart_alerts_fit(&m, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "to 100% from 20%; during spikes: sweep"));
	assert_non_null(strstr(buf, "[2J +70 pts, mark +12 pts"));
	assert_null(strchr(buf, '\x1b'));
	m.risers[0].gc = true;
	view_chart_alerts_fit(&m, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "; during spikes: GC: sweep"));
	/* 80 columns: the first riser before the facts after the period */
	view_chart_alerts_fit(&m, 80, buf, sizeof(buf));
	assert_true(!strncmp(
	    buf, "! CPU spikes every 15 s (+-1 s), 3 s each; during spikes: GC: sweep", 67));
	assert_non_null(strstr(buf, "[2J +70 pts"));
	assert_null(strstr(buf, "mark"));
	/* The CPU chart marks each predicted onset on its time axis, 15
	 * columns apart (one a second over 60 s: 90 columns wide), and says
	 * what '^' is (the last onset's mark may be under "now"). */
	struct grid g;
	assert_int_equal(grid_init(&g, 90, 5), 0);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 90, 5, &m, false), 0);
	dump(&g);
	grid_row_text(&g, 4, buf, sizeof(buf));
	assert_non_null(strstr(buf, "^ spikes every 15 s"));
	char *c1 = strchr(buf, '^'), *c2 = c1 ? strchr(c1 + 1, '^') : NULL;
	assert_non_null(c2);
	assert_true(c2 - c1 == 15 || c2[1] == ' '); /* the next may be the note's */
	unsigned carets = 0;
	for (char *q = buf; *q; q++)
		carets += *q == '^';
	assert_true(carets >= 3 && carets <= 5); /* 60 s / 15 s, plus the note's */
	grid_free(&g);
	metrics_free(&m);

	init_metrics(&m, 60);
	for (int i = 0; i < 100; i++) {
		metrics_push_process(&m, 100 + i, 100, 100 * MIB, 0, 0);
		metrics_eval(&m, 100 + i);
	}
	view_chart_alerts_fit(&m, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	metrics_free(&m);
}

/* One thread's rhythm while the process's sum has none (its name
 * sanitized), and the RSS's: their alerts, each whole or dropped. */
static void test_alert_thread_and_mem_rhythm(void **state)
{
	struct metrics m;
	char buf[512];

	init_metrics(&m, 60);
	for (int i = 0; i < 60; i++) {
		double burst = i % 5 < 2 ? 100 : 0;
		metrics_push_thread(&m, 100 + i, 4502, "tick\x1b[2Jer", 'R', burst);
		metrics_push_thread(&m, 100 + i, 4503, "steady", 'R', 200);
		metrics_push_process(&m, 100 + i, 200 + burst,
				     (uint64_t)(200 * MIB + 8 * MIB * ((i + 3) % 10)), 0, 0);
		metrics_eval(&m, 100 + i);
	}
	view_chart_alerts_fit(&m, 0, buf, sizeof(buf));
	assert_string_equal(buf, "! thread tick?[2Jer (4502): CPU spikes every 5 s (+-1 s), 2 s "
				 "each, to 100% from 0%   ! RSS swings every 10 s (+-1 s), falling "
				 "72 MiB");
	view_chart_alerts_fit(&m, 80, buf, sizeof(buf));
	assert_string_equal(
	    buf, "! thread tick?[2Jer (4502): CPU spikes every 5 s (+-1 s), 2 s each   +1 more");
	metrics_free(&m);
}

static void test_sparkline(void **state)
{
	struct series s;
	struct grid g;
	char buf[256];

	assert_int_equal(series_init(&s, 60), 0);
	assert_int_equal(grid_init(&g, 30, 4), 0);
	for (int i = 0; i < 12; i++)
		series_push(&s, i, i * 10);
	view_sparkline(&g, 2, 0, 20, &s, 110, false);
	view_sparkline(&g, 2, 1, 20, &s, 110, true);
	/* 60 points into 20 columns: the maximum of each group of 3. */
	for (int i = 12; i < 60; i++)
		series_push(&s, i, i == 40 ? 100 : 0);
	view_sparkline(&g, 2, 2, 20, &s, 100, false);
	view_sparkline(&g, 2, 3, 20, &s, 0, true); /* max 0: the series' max */
	dump(&g);
	grid_row_text(&g, 0, buf, sizeof(buf));
	/* 0..110 in 12 columns, right-aligned; 0 stays blank; ASCII in
	 * quarters, as every sparkline (spark.h). */
	assert_string_equal(buf, "           ..:::|||###");
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_string_equal(buf, "           ▁▂▃▃▄▅▆▆▇██");
	/* Groups (0-2)=20, (3-5)=50, (6-8)=80, (9-11)=110 (clipped to the
	 * top), zeros, and the burst at 40 in group 13 of 20. */
	grid_row_text(&g, 2, buf, sizeof(buf));
	assert_string_equal(buf, "  .:##         #");
	grid_row_text(&g, 3, buf, sizeof(buf));
	assert_string_equal(buf, "  ▂▄▆█         █");
	grid_free(&g);
	series_free(&s);
}

/* Every renderer, at sizes from tiny to wide, drawn into the middle of a
 * grid full of 'x': the border must stay untouched. */
static void test_clipping(void **state)
{
	static const int sizes[][2] = {{1, 1},	{5, 3},	 {12, 3},  {20, 4},
				       {30, 5}, {60, 5}, {100, 8}, {200, 12}};
	struct metrics cpu, mem;
	struct grid g;

	mk_step(&cpu);
	mk_mem(&mem);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int w = sizes[i][0], h = sizes[i][1];
		for (int kind = 0; kind < 5; kind++) {
			assert_int_equal(grid_init(&g, w + 4, h + 2), 0);
			for (int y = 0; y < g.h; y++)
				grid_fill(&g, 0, y, g.w, L'x', 0);
			for (int y = 1; y <= h; y++)
				grid_fill(&g, 2, y, w, L' ', 0);
			bool utf8 = kind % 2;
			if (kind < 2)
				assert_int_equal(view_chart_cpu(&g, 2, 1, w, h, &cpu, utf8), 0);
			else if (kind < 4)
				assert_int_equal(view_chart_mem(&g, 2, 1, w, h, &mem, utf8), 0);
			else
				view_sparkline(&g, 2, 1, w, &cpu.cpu, 0, true);
			for (int y = 0; y < g.h; y++)
				for (int x = 0; x < g.w; x++)
					if (y == 0 || y == g.h - 1 || x < 2 || x >= 2 + w)
						assert_int_equal(grid_at(&g, x, y)->ch, L'x');
			/* And something was drawn inside. */
			bool drawn = false;
			for (int y = 1; y <= h; y++)
				for (int x = 2; x < 2 + w; x++)
					drawn |= grid_at(&g, x, y)->ch != L' ';
			assert_true(drawn);
			grid_free(&g);
		}
	}
	assert_int_equal(grid_init(&g, 10, 10), 0);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 0, 5, &cpu, false), 0);
	assert_int_equal(view_chart_cpu(&g, 0, 0, 5, 5, NULL, false), -EINVAL);
	grid_free(&g);
	metrics_free(&cpu);
	metrics_free(&mem);
}

/* Units and labels at the sizes the top view uses. */
static void test_labels(void **state)
{
	struct metrics m;
	struct grid g;
	char all[8192] = "", buf[1024];

	mk_step(&m);
	assert_int_equal(grid_init(&g, 80, 3), 0);
	view_chart_cpu(&g, 0, 0, 80, 3, &m, false);
	for (int y = 0; y < 3; y++) {
		grid_row_text(&g, y, buf, sizeof(buf));
		strcat(all, buf);
		strcat(all, "\n");
	}
	assert_non_null(strstr(all, "CPU %core"));
	assert_non_null(strstr(all, "100%"));
	assert_non_null(strstr(all, "floor  20%"));
	assert_non_null(strstr(all, "base   40%"));
	assert_non_null(strstr(all, "now    20%"));
	assert_non_null(strstr(all, "-60s"));
	grid_free(&g);
	metrics_free(&m);
}

TEST_MAIN(NULL, NULL, TEST(test_cpu_const), TEST(test_cpu_step), TEST(test_cpu_short_and_empty),
	  TEST(test_cpu_scope_and_floor), TEST(test_cpu_aggregated), TEST(test_mem),
	  TEST(test_mem_verdicts), TEST(test_alerts), TEST(test_alert_rhythm),
	  TEST(test_alert_thread_and_mem_rhythm), TEST(test_sparkline), TEST(test_clipping),
	  TEST(test_labels))
