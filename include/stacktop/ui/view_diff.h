/*
 * view_diff — the words of `stacktop diff -b`: a head (the files, the run
 * summaries side by side, which test decided the stars and its caveat), the
 * table (each function's own and total share: Base%, Now%, Delta, a star
 * after a significant Delta), and with --fail-above the offenders. Text
 * only; names are sanitized here.
 */
#ifndef STACKTOP_VIEW_DIFF_H
#define STACKTOP_VIEW_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diff;

struct view_diff_opts {
	const char *base_label, *new_label; /* the files as given */
	int limit;			    /* rows at most */
	bool lines;			    /* -L: show file:line */
	double fail_above;		    /* < 0: no gate */
};

/* Rows whose significant increase exceeds pct points. */
size_t view_diff_offenders(const struct diff *d, double pct);
/* The whole text into a malloc'd *buf (caller frees). 0 or -ENOMEM. */
int view_diff_text(const struct diff *d, const struct view_diff_opts *o, char **buf, size_t *len);
/* The top view in diff mode (the D key, and `stacktop diff` without -b):
 * the header, what is compared (title: "baseline (10 s, 5 s ago) vs the
 * last 10 s", "old.pb.gz vs new.pb.gz") and how, or why there are no stars,
 * the same table, rows coloured by change (red grew, blue shrank, grey not
 * significant) with a legend, and the keys (live: b and L apply). d may be
 * NULL (no baseline yet: a hint instead). full_names: C++ names whole
 * (key v); the text reports (stacktop diff -b) always print them whole. */
struct grid;
struct view_header;
void view_diff_render(struct grid *g, const struct view_header *h, const struct diff *d, bool lines,
		      bool full_names, const char *title, bool live);
/* The attribute of an icicle box in a diff (the icicle's colours): its
 * call path's total share red grew, blue shrank (starred), grey otherwise
 * or when the diff has no such path (built without paths in t's
 * direction). ctx is the struct diff. */
struct icicle;
uint16_t view_diff_attr(const void *ctx, const struct icicle *t, uint32_t node);
/* One run summary: "51.1 s, 34.7 CPU-s, avg 68%, peak 120%, RSS 12 MiB". */
struct summary;
void view_diff_summary(const struct summary *s, char *out, size_t size);

#endif
