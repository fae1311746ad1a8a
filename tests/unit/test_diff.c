/* Unit tests for diff and view_diff: profiles with known splits written as
 * folded files (with and without stacktop's per-second blocks), the test
 * each case picks, deltas, stars, gone rows, partial seconds, summaries,
 * the text and its gate, and bad input. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "runner.h"
#include "fixture.h"
#undef row /* fixture.h's; here a row of a diff */

#include "stacktop/model/diff.h"
#include "stacktop/formats/diffload.h"
#include "stacktop/ui/grid.h"
#include "stacktop/ui/view_diff.h"

static char dir[] = "/tmp/stacktop-test-diff.XXXXXX";
static char paths[32][128];
static int npaths;

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	for (int i = 0; i < npaths; i++)
		unlink(paths[i]);
	return rmdir(dir);
}

/* A folded file: seconds blocks (timed) of a/b/c counts, each second's
 * counts jittered by +-jit (a fixed pattern); extra lines appended. */
static const char *write_profile(const char *name, bool timed, int seconds, int a, int b, int c,
				 int jit, const char *extra)
{
	char *p = paths[npaths++];

	assert_true(npaths <= 32);
	FILE *f;

	snprintf(p, 128, "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f,
		"# stacktop: {wall_s=%d.000 cpu_s=%d.500 avg_cpu=50.0 peak_cpu=90.0 "
		"peak_rss=1048576}\n",
		seconds, seconds / 2);
	for (int s = 0; s < seconds; s++) {
		int j = (s % 3 - 1) * jit;
		if (timed)
			fprintf(f, "# stacktop: {second=%d}\n", s);
		fprintf(f, "main;run;hot_a %d\nmain;run;hot_b %d\nmain;run;hot_c %d\n", a + j,
			b - j, c);
	}
	if (extra)
		fputs(extra, f);
	fclose(f);
	return p;
}

/* Each string (up to NULL) stands in text; the first missing one is named. */
static void assert_has(const char *text, ...)
{
	va_list ap;
	const char *want;

	va_start(ap, text);
	while ((want = va_arg(ap, const char *)))
		if (!strstr(text, want))
			fail_msg("missing from the text: \"%s\"", want);
	va_end(ap);
}

static const struct diff_row *row(const struct diff *d, const char *func)
{
	for (size_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].func, func))
			return &d->rows[i];
	return NULL;
}

static struct diff *build1(const char *base, const char *new_, bool lines)
{
	struct diff_opts o = {.lines = lines};
	struct diff *d = NULL;
	char err[256];

	assert_int_equal(diffload_build(&base, 1, &new_, 1, &o, &d, err, sizeof(err)), 0);
	return d;
}

/* A profile as write_profile makes it. */
struct side {
	bool timed;
	int seconds, a, b, c, jit;
	const char *extra;
};

/* The diff of two profiles written from their sides. */
static struct diff *diff_of(struct side base, struct side new_)
{
	const struct side *sd[2] = {&base, &new_};
	const char *path[2];
	char name[32];

	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "side%d.folded", npaths);
		path[i] = write_profile(name, sd[i]->timed, sd[i]->seconds, sd[i]->a, sd[i]->b,
					sd[i]->c, sd[i]->jit, sd[i]->extra);
	}
	return build1(path[0], path[1], false);
}

/* 60/30/10 against 30/60/10 over 6 seconds: -30 and +30, both starred. */
static void test_real_change(void **state)
{
	struct diff *d = diff_of((struct side){true, 6, 60, 30, 10, 4, NULL},
				 (struct side){true, 6, 30, 60, 10, 4, NULL});

	assert_int_equal(d->test, DIFF_TEST_SECONDS);
	assert_int_equal(d->side[0].units, 6);
	assert_int_equal(d->side[1].units, 6);
	assert_true(fabs(row(d, "hot_a")->own.delta + 30) < 0.01);
	assert_true(fabs(row(d, "hot_b")->own.delta - 30) < 0.01);
	assert_true(row(d, "hot_a")->own.sig && row(d, "hot_b")->own.sig);
	assert_false(row(d, "hot_c")->own.sig);
	assert_true(row(d, "hot_c")->own.p == 1 || row(d, "hot_c")->own.p_adj >= 0.05);
	/* a leaf's total is its own share (the same test) */
	assert_true(row(d, "hot_b")->total.sig &&
		    row(d, "hot_b")->total.delta == row(d, "hot_b")->own.delta);
	/* main and run hold every sample on both sides: no change */
	assert_true(fabs(row(d, "main")->total.base_pct - 100) < 1e-9);
	assert_false(row(d, "main")->total.sig);
	assert_true(row(d, "main")->own.base_pct == 0);
	/* starred rows first, by |delta| */
	assert_true(d->rows[0].own.sig && d->rows[1].own.sig);
	assert_true(!strcmp(d->rows[0].func, "hot_a") || !strcmp(d->rows[1].func, "hot_a"));
	assert_int_equal(view_diff_offenders(d, 5), 1);
	assert_int_equal(view_diff_offenders(d, 35), 0);
	diff_free(d);
}

/* One function holds the profile and does not move; small rows move by a
 * third of a point: the big row is not buried under them (issue 24: after
 * b, the 60% function sat below 0.1% kernel rows). */
static void test_big_row_first(void **state)
{
	struct diff *d = diff_of((struct side){true, 6, 600, 10, 0, 5, NULL},
				 (struct side){true, 6, 600, 8, 2, 5, NULL});

	assert_true(fabs(row(d, "hot_a")->own.delta) < DIFF_MIN_TESTED_PCT);
	assert_true(fabs(row(d, "hot_c")->own.delta) > fabs(row(d, "hot_a")->own.delta));
	assert_string_equal(d->rows[0].func, "hot_a");
	diff_free(d);
}

/* The same split on both sides, with noise: nothing starred. */
static void test_no_change(void **state)
{
	struct diff *d = diff_of((struct side){true, 8, 60, 30, 10, 5, NULL},
				 (struct side){true, 7, 61, 29, 10, 6, NULL});

	for (size_t i = 0; i < d->nrows; i++)
		assert_false(d->rows[i].own.sig || d->rows[i].total.sig);
	assert_int_equal(view_diff_offenders(d, 0), 0);
	diff_free(d);
}

/* No time, one file a side: the two-proportion test (it stars a change
 * this large on 300 samples). */
static void test_untimed(void **state)
{
	struct diff *d = diff_of((struct side){false, 3, 60, 30, 10, 0, NULL},
				 (struct side){false, 3, 30, 60, 10, 0, NULL});

	assert_int_equal(d->test, DIFF_TEST_SAMPLES);
	assert_true(row(d, "hot_b")->own.sig);
	diff_free(d);
}

/* No time, two files a side: Welch on the files' shares. */
static void test_repetitions(void **state)
{
	const char *b[2] = {write_profile("b4.folded", false, 2, 60, 30, 10, 0, NULL),
			    write_profile("b5.folded", false, 2, 58, 32, 10, 0, NULL)};
	const char *n[2] = {write_profile("n4.folded", false, 2, 30, 60, 10, 0, NULL),
			    write_profile("n5.folded", false, 2, 33, 57, 10, 0, NULL)};
	struct diff_opts o = {0};
	struct diff *d;
	char err[256];

	assert_int_equal(diffload_build(b, 2, n, 2, &o, &d, err, sizeof(err)), 0);
	assert_int_equal(d->test, DIFF_TEST_FILES);
	assert_int_equal(d->side[0].units, 2);
	assert_int_equal(d->side[0].nfiles, 2);
	assert_true(row(d, "hot_a")->own.sig && row(d, "hot_b")->own.sig);
	/* summaries: the mean of each side's files */
	assert_int_equal(d->side[0].nsummaries, 2);
	assert_true(fabs(d->side[0].summary.wall_s - 2) < 1e-9);
	assert_true(d->side[0].summary.peak_rss == 1048576);
	diff_free(d);
}

/* Two seconds a side are too few: no stars, and why. A partial last
 * second (under a quarter of the median) is not a unit. */
static void test_too_few_and_partial(void **state)
{
	struct diff *d = diff_of(
	    (struct side){true, 2, 60, 30, 10, 0, NULL},
	    (struct side){true, 2, 30, 60, 10, 0, "# stacktop: {second=2}\nmain;run;hot_a 3\n"});

	assert_int_equal(d->test, DIFF_TEST_NONE);
	assert_non_null(strstr(d->why_none, "too few seconds"));
	assert_int_equal(d->side[1].units, 2);
	for (size_t i = 0; i < d->nrows; i++)
		assert_false(d->rows[i].own.sig || d->rows[i].total.sig);
	diff_free(d);
}

/* A function on one side only is a row; the text says "(gone)". */
static void test_gone_and_text(void **state)
{
	struct diff *d = diff_of(
	    (struct side){true, 5, 60, 30, 10, 3, "# stacktop: {second=1}\nmain;old_path 50\n"},
	    (struct side){true, 5, 30, 60, 10, 3, NULL});
	struct view_diff_opts vo = {
	    .base_label = "old", .new_label = "new", .limit = 30, .fail_above = 5};
	char *text = NULL;
	size_t len;

	assert_non_null(row(d, "old_path"));
	assert_true(row(d, "old_path")->own.new_pct == 0 && row(d, "old_path")->gone);
	assert_int_equal(view_diff_text(d, &vo, &text, &len), 0);
	assert_has(text,
		   "\n-------- own --------  ------- total -------\n"
		   " Base%   Now%   Delta   Base%   Now%   Delta   Function\n",
		   "old_path (gone)\n", "*  hot_b\n",
		   "run: 5.0 s, 2.5 CPU-s, avg 50%, peak 90%, RSS 1.0 MiB → ",
		   "fail-above 5.0: 1 function grew", "per second (base 5 s, new 5 s)", NULL);
	free(text);
	diff_free(d);
}

/* Names from files (invalid UTF-8; a control byte would make the file
 * binary) and labels (an escape) are sanitized in the text. */
static void test_hostile_name(void **state)
{
	struct diff *d =
	    diff_of((struct side){false, 1, 60, 30, 10, 0, "main;evil\xff\xfename 40\n"},
		    (struct side){false, 1, 60, 30, 10, 0, NULL});
	struct view_diff_opts vo = {
	    .base_label = "a\x1b", .new_label = "b", .limit = 30, .fail_above = -1};
	char *text = NULL;
	size_t len;

	assert_int_equal(view_diff_text(d, &vo, &text, &len), 0);
	assert_null(memchr(text, 0x1b, len));
	assert_null(memchr(text, 0xff, len));
	assert_non_null(strstr(text, "evil??name"));
	free(text);
	diff_free(d);
}

/* Seconds far apart cost nothing (units are the seconds that hold
 * samples), and a second past 1e8 makes the file untimed. */
static void test_sparse_seconds(void **state)
{
	const char *b =
	    write_profile("b10.folded", false, 0, 0, 0, 0, 0,
			  "# stacktop: {second=5}\nmain;run;hot_a 60\nmain;run;hot_b 40\n"
			  "# stacktop: {second=50000000}\nmain;run;hot_a 61\nmain;run;hot_b 39\n"
			  "# stacktop: {second=99999999}\nmain;run;hot_a 59\nmain;run;hot_b 41\n");
	const char *n = write_profile("n10.folded", true, 4, 30, 70, 0, 2, NULL);
	const char *h = write_profile("h10.folded", false, 0, 0, 0, 0, 0,
				      "# stacktop: {second=2147483647}\nmain;run;hot_a 60\n");
	struct diff *d = build1(b, n, false);

	assert_int_equal(d->test, DIFF_TEST_SECONDS);
	assert_int_equal(d->side[0].units, 3);
	assert_true(row(d, "hot_b")->own.sig);
	diff_free(d);
	d = build1(h, n, false);
	assert_int_equal(d->test, DIFF_TEST_SAMPLES);
	diff_free(d);
}

/* -K: a kernel leaf's samples go to the user function below it. */
static void test_hide_kernel(void **state)
{
	const char *b = write_profile("b11.folded", false, 1, 60, 30, 10, 0,
				      "main;run;hot_a;do_syscall_64_[k] 40\n");
	const char *n = write_profile("n11.folded", false, 1, 60, 30, 10, 0, NULL);
	struct diff_opts o = {.hide_kernel = true};
	struct diff *d;
	char err[256];

	d = build1(b, n, false);
	assert_non_null(row(d, "do_syscall_64"));
	assert_true(row(d, "do_syscall_64")->kernel);
	diff_free(d);
	assert_int_equal(diffload_build(&b, 1, &n, 1, &o, &d, err, sizeof(err)), 0);
	assert_null(row(d, "do_syscall_64"));
	assert_true(fabs(row(d, "hot_a")->own.base_pct - 100.0 * 100 / 140) < 0.01);
	diff_free(d);
}

/* The caller shift: leaf_a and leaf_b both call spin, 60/30 then 30/60
 * (per second, jittered), rest 7 or 13. Base also has one own sample of leaf_b
 * a second (gone in new, while leaf_b still calls spin), and old_only
 * (gone); new has fresh under leaf_b (new). */
static const char *write_callers(const char *name, int seconds, int a, int b, bool base)
{
	char *p = paths[npaths++];
	FILE *f;

	assert_true(npaths <= 32);
	snprintf(p, 128, "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "w"));
	for (int s = 0; s < seconds; s++) {
		int j = (s % 3 - 1) * 3;
		fprintf(f, "# stacktop: {second=%d}\n", s);
		fprintf(f, "main;run;leaf_a;spin %d\nmain;run;leaf_b;spin %d\nmain;run;rest %d\n",
			a + j, b - j, 10 + (s % 2) * 6 - 3);
		fprintf(f, base ? "main;run;leaf_b 1\nmain;run;old_only 2\n"
				: "main;run;leaf_b;fresh 2\n");
	}
	fclose(f);
	return p;
}

/* Own time alone sees nothing (spin's own share stays); totals see
 * leaf_b +30 and leaf_a -30, starred, ranked first, neither gone nor new;
 * the gate names leaf_b by its total. */
static void test_caller_shift(void **state)
{
	const char *b = write_callers("cb.folded", 6, 60, 30, true);
	const char *n = write_callers("cn.folded", 6, 30, 60, false);
	struct diff *d = build1(b, n, false);
	const struct diff_row *la = row(d, "leaf_a"), *lb = row(d, "leaf_b"), *sp = row(d, "spin");
	struct view_diff_opts vo = {
	    .base_label = "b", .new_label = "n", .limit = 30, .fail_above = 5};
	char *text = NULL;
	size_t len;

	assert_int_equal(d->test, DIFF_TEST_SECONDS);
	assert_non_null(la);
	assert_non_null(lb);
	assert_non_null(sp);
	/* 6 seconds of 103 (base: 90 + 10 + 1 + 2) and 102 samples (90 +
	 * 10 + 2); leaf_b's total holds its own time and fresh */
	assert_true(fabs(lb->total.base_pct - 100.0 * 31 / 103) < 0.01);
	assert_true(fabs(lb->total.new_pct - 100.0 * 62 / 102) < 0.01);
	assert_true(lb->total.delta > 25 && lb->total.sig);
	assert_true(la->total.delta < -25 && la->total.sig);
	assert_false(sp->own.sig);
	assert_true(fabs(sp->own.delta) < 2);
	/* leaf_b's own time vanished, but it is on new's stacks: not gone */
	assert_true(lb->own.new_pct == 0 && lb->own.base_pct > 0);
	assert_false(lb->gone || lb->added || la->gone || la->added);
	assert_true(row(d, "old_only")->gone && !row(d, "old_only")->added);
	assert_true(row(d, "fresh")->added && !row(d, "fresh")->gone);
	/* the change is the larger one; the two callers come first */
	assert_ptr_equal(diff_row_change(lb), &lb->total);
	assert_true((!strcmp(d->rows[0].func, "leaf_a") && !strcmp(d->rows[1].func, "leaf_b")) ||
		    (!strcmp(d->rows[0].func, "leaf_b") && !strcmp(d->rows[1].func, "leaf_a")));
	/* own + total tests of the tested rows, leaves' totals not twice */
	assert_true(d->ntested > 0);
	assert_int_equal(view_diff_offenders(d, 5), 1);
	assert_int_equal(view_diff_text(d, &vo, &text, &len), 0);
	if (getenv("DIFF_DUMP"))
		printf("%s", text);
	assert_null(strstr(text, "leaf_b (gone)"));
	assert_null(strstr(text, "leaf_a (gone)"));
	assert_has(text, "old_only (gone)\n", "fresh (new)\n", "*  leaf_b\n", "*  leaf_a\n",
		   "fail-above 5.0: 1 function grew", "  leaf_b (total)\n", NULL);
	free(text);
	diff_free(d);
}

/* The paths, top-down and bottom-up: main;run;leaf_b grew, starred, as
 * did spin called from leaf_b (bottom-up); a path the diff does not have
 * is not found. */
static void test_paths(void **state)
{
	const char *b = write_callers("pb.folded", 6, 60, 30, true);
	const char *n = write_callers("pn.folded", 6, 30, 60, false);
	struct diff_opts o = {.paths_down = true, .paths_up = true};
	struct diff *d;
	char err[256];
	int64_t m, r, lb, sp, up;

	assert_int_equal(diffload_build(&b, 1, &n, 1, &o, &d, err, sizeof(err)), 0);
	assert_true((m = diff_path_find(d, DIFF_PATH_TOP, "main", false)) >= 0);
	assert_true((r = diff_path_find(d, (uint32_t)m, "run", false)) >= 0);
	assert_true((lb = diff_path_find(d, (uint32_t)r, "leaf_b", false)) >= 0);
	assert_true((sp = diff_path_find(d, (uint32_t)lb, "spin", false)) >= 0);
	assert_true(d->paths[lb].total.sig && d->paths[lb].total.delta > 25);
	assert_true(d->paths[sp].total.sig && d->paths[sp].total.delta > 25);
	assert_false(d->paths[m].total.sig);
	assert_true(fabs(d->paths[m].total.base_pct - 100) < 1e-9);
	/* spin as a whole (bottom-up, first level) did not change; spin
	 * called from leaf_a shrank */
	assert_true((up = diff_path_find(d, DIFF_PATH_BOTTOM, "spin", false)) >= 0);
	assert_false(d->paths[up].total.sig);
	assert_true((up = diff_path_find(d, (uint32_t)up, "leaf_a", false)) >= 0);
	assert_true(d->paths[up].total.sig && d->paths[up].total.delta < -25);
	assert_int_equal(diff_path_find(d, DIFF_PATH_TOP, "spin", false), -1);
	assert_int_equal(diff_path_find(d, (uint32_t)m, "run", true), -1);
	diff_free(d);
	/* without paths asked for: none */
	o = (struct diff_opts){0};
	assert_int_equal(diffload_build(&b, 1, &n, 1, &o, &d, err, sizeof(err)), 0);
	assert_int_equal(d->npaths, 0);
	assert_int_equal(diff_path_find(d, DIFF_PATH_TOP, "main", false), -1);
	diff_free(d);
}

/* The top view in diff mode (D): the grid as text, the callers' rows
 * first and coloured by their total's change (red grew, blue shrank),
 * spin grey. */
static void test_render(void **state)
{
	const char *b = write_callers("rb.folded", 6, 60, 30, true);
	const char *n = write_callers("rn.folded", 6, 30, 60, false);
	struct diff *d = build1(b, n, false);
	struct grid g = {0};

	assert_int_equal(grid_resize(&g, 100, 14), 0);
	view_diff_render(&g, NULL, d, false, false, "b vs n", false);
	fixture_dump(&g, "DIFF_DUMP");
	fixture_assert_rows(
	    &g, 0,
	    (const char *const[]){"diff: b vs n: Welch per second (6 vs 6), Holm; * p < 0.05",
				  "legend: grew shrank not significant",
				  "-------- own --------  ------- total -------",
				  " Base%   Now%   Delta   Base%   Now%   Delta   Function",
				  "   1.0    0.0    -1.0    30.1   60.8   +30.7*  leaf_b",
				  "   0.0    0.0    +0.0    58.3   29.4   -28.8*  leaf_a",
				  "   0.0    2.0    +2.0*    0.0    2.0    +2.0*  fresh (new)",
				  "   1.9    0.0    -1.9*    1.9    0.0    -1.9*  old_only (gone)",
				  "  87.4   88.2    +0.9    87.4   88.2    +0.9   spin",
				  "   9.7    9.8    +0.1     9.7    9.8    +0.1   rest",
				  "   0.0    0.0    +0.0   100.0  100.0    +0.0   main",
				  "   0.0    0.0    +0.0   100.0  100.0    +0.0   run", "",
				  "D plain views  2 icicle (diff colours)  q quit", NULL});
	/* a row's colour is its larger significant change's */
	assert_int_equal(GRID_COLOR_OF(grid_at(&g, 0, 4)->attr), GRID_C_RED);
	assert_int_equal(GRID_COLOR_OF(grid_at(&g, 0, 5)->attr), GRID_C_BLUE);
	assert_true(grid_at(&g, 0, 8)->attr & GRID_DIM);
	grid_free(&g);
	diff_free(d);
}

static void test_errors(void **state)
{
	const char *ok = write_profile("b9.folded", false, 1, 60, 30, 10, 0, NULL);
	const char *missing = "/nonexistent/stacktop.folded";
	struct diff_opts o = {0};
	struct diff *d = (struct diff *)1;
	char err[256], list[64];
	const char *p[4];
	size_t n;

	assert_int_equal(diffload_build(&ok, 1, &missing, 1, &o, &d, err, sizeof(err)), -ENOENT);
	assert_null(d);
	assert_non_null(strstr(err, "nonexistent/stacktop.folded"));
	assert_int_equal(diffload_build(&ok, 0, &ok, 1, &o, &d, err, sizeof(err)), -EINVAL);
	strcpy(list, "a,b,c");
	assert_int_equal(diff_split_list(list, p, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(p[2], "c");
	strcpy(list, "a,,b");
	assert_int_equal(diff_split_list(list, p, 4, &n), -EINVAL);
	strcpy(list, "a,b,c,d,e");
	assert_int_equal(diff_split_list(list, p, 4, &n), -EINVAL);
	strcpy(list, "a,");
	assert_int_equal(diff_split_list(list, p, 4, &n), -EINVAL);
}

TEST_MAIN(setup, teardown, TEST(test_real_change), TEST(test_no_change), TEST(test_untimed),
	  TEST(test_repetitions), TEST(test_too_few_and_partial), TEST(test_gone_and_text),
	  TEST(test_hostile_name), TEST(test_sparse_seconds), TEST(test_hide_kernel),
	  TEST(test_caller_shift), TEST(test_paths), TEST(test_render), TEST(test_errors),
	  TEST(test_big_row_first))
