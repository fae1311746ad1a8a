/*
 * diff — `stacktop diff`: two sets of saved profiles (a base and a new side,
 * one or more files each: repetitions of one measurement) compared function
 * by function, with a test of whether each change is bigger than the noise.
 *
 * Each side's share of a function is its own samples (the function is the
 * leaf: "own", as the top view's default column) over the side's total, so
 * profiles of different lengths or rates compare. Which test decides the
 * star (diff.test):
 *  - DIFF_TEST_SECONDS: every file says each sample's second (`record`
 *    writes it): Welch's t-test on the function's share in each second,
 *    seconds of all files of a side pooled. Samples within a second are not
 *    independent (a program stays in a phase), seconds much more nearly so.
 *    Seconds with under a quarter of the side's median samples (the partial
 *    first and last) are left out of the test. Under STATS_MIN_UNITS
 *    seconds a side: no test (why_none says so).
 *  - DIFF_TEST_FILES: no time, but two files or more on each side: Welch on
 *    each file's share (the repetitions are the observations).
 *  - DIFF_TEST_SAMPLES: one file a side without time: the two-proportion
 *    z-test on the sample counts, which takes every sample as independent
 *    and so overstates certainty (diff_caveat says so).
 * p-values are corrected with Holm's method over the rows tested, so the
 * chance of any false star in one diff stays under alpha (0.05). Rows whose
 * share is under DIFF_MIN_TESTED_PCT on both sides are listed but not
 * tested (a filter on the pooled share, which does not depend on which side
 * holds the samples, and keeps the correction from drowning real changes).
 *
 * Rows sort significant first, then by |delta|. Functions present on one
 * side only are rows too (gone: now 0; new: base 0).
 *
 * Memory: the diff keeps its rows and their names, the per-unit counts
 * while testing; each snapshot keeps its own names. Profile files are read
 * into snapshots one at a time by formats/diffload.c (report's caps hold).
 * The caller frees with diff_free and diff_snap_free.
 */
#ifndef STACKTOP_DIFF_H
#define STACKTOP_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/lib/stats.h"
#include "stacktop/model/summary.h"

#define DIFF_ALPHA 0.05
#define DIFF_MIN_TESTED_PCT 0.5
#define DIFF_MAX_FILES 64

enum diff_test {
	DIFF_TEST_NONE,	   /* too few seconds or files: no stars */
	DIFF_TEST_SECONDS, /* Welch on per-second shares */
	DIFF_TEST_FILES,   /* Welch on per-file shares */
	DIFF_TEST_SAMPLES, /* two-proportion z-test */
};

struct diff_row {
	/* Raw text from the files (sanitize before showing). */
	const char *func, *file;
	int line;
	bool kernel;
	double base_pct, new_pct, delta; /* shares in %, delta = new - base in points */
	bool tested;
	double p, p_adj; /* two-sided; Holm-adjusted (1 when not tested) */
	bool sig;	 /* p_adj < DIFF_ALPHA */
	/* The test's own difference and spread, in points, for the gate:
	 * is the increase larger than PCT, not only larger than 0. */
	double test_delta;
	struct stats_result test;
};

struct diff_side {
	size_t nfiles;
	uint64_t samples;
	size_t units;		/* observations the test used (seconds or files) */
	bool timed;		/* every file carries seconds */
	size_t nsummaries;	/* files with a run summary */
	struct summary summary; /* their mean */
};

struct diff {
	struct diff_row *rows;
	size_t nrows;
	struct diff_side side[2]; /* 0: base, 1: new */
	enum diff_test test;
	char why_none[160]; /* DIFF_TEST_NONE: why */
};

struct diff_opts {
	bool lines; /* a row per file:line instead of per function */
	/* diffload_build: a kernel leaf's samples go to the innermost user frame
	 * (-K, as the top view does); stacks all in the kernel are left out */
	bool hide_kernel;
};

/* ---- snapshots: what one side is made of ----
 * A list of (leaf function, file number, second, count) with its own copies
 * of the names: from profile files (diffload_build: diff_snap_file, then
 * diff_snap_add per stack), or from the last seconds of a live window (the
 * b key's baseline, and "now" for the D key). */
struct diff_snap;
struct frame;
struct window;
int diff_snap_new(struct diff_snap **out);
void diff_snap_free(struct diff_snap *sn);
/* Start the snapshot's next file, with its run summary (NULL: none; the
 * side shows the mean of those it has). -EINVAL past DIFF_MAX_FILES. */
int diff_snap_file(struct diff_snap *sn, const struct summary *sum);
/* count samples whose leaf is frame leaf (its names are copied), in the
 * file begun last, at second (-1: the file has no time). 0, -ENOMEM, or
 * -EINVAL before any diff_snap_file. */
int diff_snap_add(struct diff_snap *sn, const struct frame *leaf, int32_t second, uint64_t count);
/* The window's buckets of the last `seconds` seconds before now_ns (one
 * second each), as one file with seconds 0 .. seconds-1. With lines, file:line
 * is looked up first (window_resolve_lines). 0 or -ENOMEM. */
int diff_snap_window(struct window *w, uint64_t now_ns, unsigned seconds, bool lines,
		     struct diff_snap **out);
/* Compare two snapshots (see the head for the test); they may be freed
 * after. 0 or -ENOMEM. */
int diff_compare(const struct diff_snap *base, const struct diff_snap *new_,
		 const struct diff_opts *o, struct diff **out);

void diff_free(struct diff *d);

/* Split "a,b,c" into at most max paths (pointers into buf, which is
 * modified). 0 or -EINVAL (empty item, too many). */
int diff_split_list(char *buf, const char **paths, size_t max, size_t *n);

#endif
