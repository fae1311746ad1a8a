/*
 * diff — `stacktop diff`: two sets of saved profiles (a base and a new side,
 * one or more files each: repetitions of one measurement) compared function
 * by function, with a test of whether each change is bigger than the noise.
 *
 * Each function gets two shares a side, each over the side's samples (so
 * profiles of different lengths or rates compare): own (samples whose leaf
 * it is, the top view's %Own) and total (samples whose stack holds it
 * anywhere, once however deep it recurses: %Total). Own alone misses a hot
 * path that moved from one caller to another: both callers' leaf is the
 * same function, whose own share does not move, while the callers' totals
 * do. Whole call paths (the icicle's boxes, top-down and bottom-up) get a
 * total share too, for the icicle's colours (opts.paths_*).
 *
 * Which test decides a share's star (diff.test):
 *  - DIFF_TEST_SECONDS: every file says each sample's second (`record`
 *    writes it): Welch's t-test on the share in each second, seconds of
 *    all files of a side pooled. Samples within a second are not
 *    independent (a program stays in a phase), seconds much more nearly so.
 *    Seconds with under a quarter of the side's median samples (the partial
 *    first and last) are left out of the test. Under STATS_MIN_UNITS
 *    seconds a side: no test (why_none says so).
 *  - DIFF_TEST_FILES: no time, but two files or more on each side: Welch on
 *    each file's share (the repetitions are the observations).
 *  - DIFF_TEST_SAMPLES: one file a side without time: the two-proportion
 *    z-test on the sample counts, which takes every sample as independent
 *    and so overstates certainty (diff_caveat says so).
 * p-values are corrected with Holm's method over the tests of one family,
 * so the chance of any false star in one diff stays under alpha (0.05):
 * the rows' own and total tests are one family (a total that is the same
 * counts as own, as for a leaf that calls nothing, is not tested twice), the
 * paths another. A share whose mean over the two sides is under
 * DIFF_MIN_TESTED_PCT is listed but not tested (a filter on the pooled
 * share, which does not depend on which side holds the samples, and keeps
 * the correction from drowning real changes); nor is one within
 * DIFF_MIN_TESTED_PCT of 100% on both sides (a root in nearly every stack
 * of both: main, _start; with totals they multiplied the correction and a
 * doubled caller lost its star on a loaded machine).
 *
 * A row's change (diff_row_change) is the larger of its own and total
 * changes, the significant ones first. Rows sort significant (either
 * share) first, then by the size of that change. Functions present on one
 * side only are rows too: gone (in no stack of the new side) or new (in
 * none of the base side); a function whose own time vanished but that
 * still calls is neither.
 *
 * Memory: the diff keeps its rows, paths and their names, the per-unit
 * counts while testing; each snapshot keeps its stacks as a trie with its
 * own names. Profile files are read into snapshots one at a time by
 * formats/diffload.c (report's caps hold). The caller frees with diff_free
 * and diff_snap_free.
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

/* One share of a row or path on both sides, and its test. */
struct diff_share {
	double base_pct, new_pct, delta; /* shares in %, delta = new - base in points */
	bool tested;
	double p, p_adj; /* two-sided; Holm-adjusted (1 when not tested) */
	bool sig;	 /* p_adj < DIFF_ALPHA */
	/* The test's own difference and spread, in points, for the gate:
	 * is the increase larger than PCT, not only larger than 0. */
	double test_delta;
	struct stats_result test;
};

struct diff_row {
	/* Raw text from the files (sanitize before showing). */
	const char *func, *file;
	int line;
	bool kernel;
	struct diff_share own, total;
	bool gone, added; /* in no stack of the new side / of the base side */
};

#define DIFF_PATH_TOP UINT32_MAX	  /* parent of a top-down path's outermost function */
#define DIFF_PATH_BOTTOM (UINT32_MAX - 1) /* parent of a bottom-up path's leaf */

/* A call path: its parent path (or DIFF_PATH_TOP/BOTTOM) plus one function,
 * named as the icicle names its boxes (icicle_frame_name). */
struct diff_path {
	uint32_t parent;
	const char *name;
	bool kernel;
	struct diff_share total;
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
	size_t ntested; /* tests in the rows' family (own and total): the gate's Bonferroni */
	struct diff_path *paths; /* with opts.paths_down / paths_up, else none */
	size_t npaths;
	struct diff_side side[2]; /* 0: base, 1: new */
	enum diff_test test;
	char why_none[160]; /* DIFF_TEST_NONE: why */
};

struct diff_opts {
	bool lines; /* a row per file:line instead of per function */
	/* Kernel frames are left out (-K, K): a kernel leaf's samples go to
	 * the innermost user frame, as the top view does; stacks all in the
	 * kernel are left out. */
	bool hide_kernel;
	/* The call paths for the icicle's colours: top-down, bottom-up. */
	bool paths_down, paths_up;
};

/* ---- snapshots: what one side is made of ----
 * Stacks with a (file number, second, count) each, kept as a trie with its
 * own copies of the names: from profile files (diffload_build:
 * diff_snap_file, then diff_snap_add per stack), or from the last seconds
 * of a live window (the b key's baseline, and "now" for the D key). */
struct diff_snap;
struct frames;
struct window;
int diff_snap_new(struct diff_snap **out);
void diff_snap_free(struct diff_snap *sn);
/* Start the snapshot's next file, with its run summary (NULL: none; the
 * side shows the mean of those it has). -EINVAL past DIFF_MAX_FILES. */
int diff_snap_file(struct diff_snap *sn, const struct summary *sum);
/* count samples of the stack ids[0..n) (frame ids of fr, outermost first;
 * names are copied), in the file begun last, at second (-1: the file has no
 * time). An unknown id ends the stack there. 0, -ENOMEM, or -EINVAL before
 * any diff_snap_file. */
int diff_snap_add(struct diff_snap *sn, const struct frames *fr, const uint32_t *ids, size_t n,
		  int32_t second, uint64_t count);
/* The window's buckets of the last `seconds` seconds before now_ns (one
 * second each), as one file with seconds 0 .. seconds-1. With lines, file:line
 * is looked up first (window_resolve_lines). 0 or -ENOMEM. */
int diff_snap_window(struct window *w, uint64_t now_ns, unsigned seconds, bool lines,
		     struct diff_snap **out);
/* Add every stack of src (its cells, whatever their file or second; names
 * copied) to dst's file begun last, at second: one side built from
 * snapshots kept apart (model/spikes). 0, -ENOMEM, or -EINVAL before any
 * diff_snap_file on dst. */
int diff_snap_merge(struct diff_snap *dst, const struct diff_snap *src, int32_t second);
/* What sn holds in memory, in bytes (its names, nodes, cells and indexes;
 * a memory budget's measure). */
size_t diff_snap_bytes(const struct diff_snap *sn);
/* The samples sn counts, over all its cells. */
uint64_t diff_snap_samples(const struct diff_snap *sn);
/* Compare two snapshots (see the head for the test); they may be freed
 * after. 0 or -ENOMEM. */
int diff_compare(const struct diff_snap *base, const struct diff_snap *new_,
		 const struct diff_opts *o, struct diff **out);

void diff_free(struct diff *d);

/* The share that is the row's change: the larger |delta| of own and total,
 * among the significant ones when either is. */
const struct diff_share *diff_row_change(const struct diff_row *r);

/* The path that is path parent (DIFF_PATH_TOP or DIFF_PATH_BOTTOM to
 * start) followed by function name, or -1 when the diff has none. */
int64_t diff_path_find(const struct diff *d, uint32_t parent, const char *name, bool kernel);

/* Split "a,b,c" into at most max paths (pointers into buf, which is
 * modified). 0 or -EINVAL (empty item, too many). */
int diff_split_list(char *buf, const char **paths, size_t max, size_t *n);

#endif
