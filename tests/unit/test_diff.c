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

#include "stacktop/model/diff.h"
#include "stacktop/formats/diffload.h"
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

/* 60/30/10 against 30/60/10 over 6 seconds: -30 and +30, both starred. */
static void test_real_change(void **state)
{
	const char *b = write_profile("b1.folded", true, 6, 60, 30, 10, 4, NULL);
	const char *n = write_profile("n1.folded", true, 6, 30, 60, 10, 4, NULL);
	struct diff *d = build1(b, n, false);

	assert_int_equal(d->test, DIFF_TEST_SECONDS);
	assert_int_equal(d->side[0].units, 6);
	assert_int_equal(d->side[1].units, 6);
	assert_true(fabs(row(d, "hot_a")->delta + 30) < 0.01);
	assert_true(fabs(row(d, "hot_b")->delta - 30) < 0.01);
	assert_true(row(d, "hot_a")->sig && row(d, "hot_b")->sig);
	assert_false(row(d, "hot_c")->sig);
	assert_true(row(d, "hot_c")->p == 1 || row(d, "hot_c")->p_adj >= 0.05);
	/* starred rows first, by |delta| */
	assert_true(d->rows[0].sig && d->rows[1].sig);
	assert_string_equal(d->rows[2].func, "hot_c");
	assert_int_equal(view_diff_offenders(d, 5), 1);
	assert_int_equal(view_diff_offenders(d, 35), 0);
	diff_free(d);
}

/* One function holds the profile and does not move; small rows move by a
 * third of a point: the big row is not buried under them (issue 24: after
 * b, the 60% function sat below 0.1% kernel rows). */
static void test_big_row_first(void **state)
{
	const char *b = write_profile("big_b.folded", true, 6, 600, 10, 0, 5, NULL);
	const char *n = write_profile("big_n.folded", true, 6, 600, 8, 2, 5, NULL);
	struct diff *d = build1(b, n, false);

	assert_true(fabs(row(d, "hot_a")->delta) < DIFF_MIN_TESTED_PCT);
	assert_true(fabs(row(d, "hot_c")->delta) > fabs(row(d, "hot_a")->delta));
	for (size_t i = 0; getenv("DIFF_DUMP") && i < d->nrows; i++)
		fprintf(stderr, "%s %.2f %.2f %+.2f %d\n", d->rows[i].func, d->rows[i].base_pct,
			d->rows[i].new_pct, d->rows[i].delta, d->rows[i].sig);
	assert_string_equal(d->rows[0].func, "hot_a");
	diff_free(d);
}

/* The same split on both sides, with noise: nothing starred. */
static void test_no_change(void **state)
{
	const char *b = write_profile("b2.folded", true, 8, 60, 30, 10, 5, NULL);
	const char *n = write_profile("n2.folded", true, 7, 61, 29, 10, 6, NULL);
	struct diff *d = build1(b, n, false);

	for (size_t i = 0; i < d->nrows; i++)
		assert_false(d->rows[i].sig);
	assert_int_equal(view_diff_offenders(d, 0), 0);
	diff_free(d);
}

/* No time, one file a side: the two-proportion test (it stars a change
 * this large on 300 samples). */
static void test_untimed(void **state)
{
	const char *b = write_profile("b3.folded", false, 3, 60, 30, 10, 0, NULL);
	const char *n = write_profile("n3.folded", false, 3, 30, 60, 10, 0, NULL);
	struct diff *d = build1(b, n, false);

	assert_int_equal(d->test, DIFF_TEST_SAMPLES);
	assert_true(row(d, "hot_b")->sig);
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
	assert_true(row(d, "hot_a")->sig && row(d, "hot_b")->sig);
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
	const char *b = write_profile("b6.folded", true, 2, 60, 30, 10, 0, NULL);
	const char *n = write_profile("n6.folded", true, 2, 30, 60, 10, 0,
				      "# stacktop: {second=2}\nmain;run;hot_a 3\n");
	struct diff *d = build1(b, n, false);

	assert_int_equal(d->test, DIFF_TEST_NONE);
	assert_non_null(strstr(d->why_none, "too few seconds"));
	assert_int_equal(d->side[1].units, 2);
	for (size_t i = 0; i < d->nrows; i++)
		assert_false(d->rows[i].sig);
	diff_free(d);
}

/* A function on one side only is a row; the text says "(gone)". */
static void test_gone_and_text(void **state)
{
	const char *b = write_profile("b7.folded", true, 5, 60, 30, 10, 3,
				      "# stacktop: {second=1}\nmain;old_path 50\n");
	const char *n = write_profile("n7.folded", true, 5, 30, 60, 10, 3, NULL);
	struct diff *d = build1(b, n, false);
	struct view_diff_opts vo = {
	    .base_label = "old", .new_label = "new", .limit = 30, .fail_above = 5};
	char *text = NULL;
	size_t len;

	assert_non_null(row(d, "old_path"));
	assert_true(row(d, "old_path")->new_pct == 0);
	assert_int_equal(view_diff_text(d, &vo, &text, &len), 0);
	assert_non_null(strstr(text, " Base%   Now%   Delta  Sig  Function\n"));
	assert_non_null(strstr(text, "old_path (gone)\n"));
	assert_non_null(strstr(text, "*  hot_b\n"));
	assert_non_null(strstr(text, "run: 5.0 s, 2.5 CPU-s, avg 50%, peak 90%, RSS 1.0 MiB → "));
	assert_non_null(strstr(text, "fail-above 5.0: 1 function grew"));
	assert_non_null(strstr(text, "per second (base 5 s, new 5 s)"));
	free(text);
	diff_free(d);
}

/* Names from files (invalid UTF-8; a control byte would make the file
 * binary) and labels (an escape) are sanitized in the text. */
static void test_hostile_name(void **state)
{
	const char *b =
	    write_profile("b8.folded", false, 1, 60, 30, 10, 0, "main;evil\xff\xfename 40\n");
	const char *n = write_profile("n8.folded", false, 1, 60, 30, 10, 0, NULL);
	struct diff *d = build1(b, n, false);
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
	assert_true(row(d, "hot_b")->sig);
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
	assert_true(fabs(row(d, "hot_a")->base_pct - 100.0 * 100 / 140) < 0.01);
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
	  TEST(test_errors), TEST(test_big_row_first))
