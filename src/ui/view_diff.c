/*
 * view_diff — `stacktop diff -b` as text (see view_diff.h). Everything from
 * a file (function, module and file names) goes through text_sanitize.
 */
#include "stacktop/ui/view_diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/model/diff.h"
#include "stacktop/model/icicle.h"
#include "stacktop/ui/grid.h"
#include "stacktop/lib/text.h"
#include "stacktop/ui/view.h"

void view_diff_summary(const struct summary *s, char *out, size_t size)
{
	char rss[32];

	text_bytes(s->peak_rss, rss, sizeof(rss));
	snprintf(out, size, "%.1f s, %.1f CPU-s, avg %.0f%%, peak %.0f%%, RSS %s", s->wall_s,
		 s->cpu_s, s->avg_cpu, s->peak_cpu, rss);
}

/* A share's significant increase of more than pct points: starred, and
 * the test says the increase itself exceeds pct (one-sided, Bonferroni
 * over the tests of the rows' family), so a noisy 7-point wobble of an
 * unchanged program does not fail a gate of 5. */
static bool share_offends(const struct diff_share *s, double pct, size_t ntested)
{
	return s->sig && s->delta > pct &&
	       stats_p_above(&s->test, s->test_delta, pct) < DIFF_ALPHA / (double)ntested;
}

/* The row's offending share with the larger increase (own or total), or
 * NULL: a caller whose total grew offends as its leaf would. */
static const struct diff_share *offends(const struct diff *d, const struct diff_row *r, double pct)
{
	size_t nt = d->ntested ? d->ntested : 1;
	bool o = share_offends(&r->own, pct, nt), t = share_offends(&r->total, pct, nt);

	if (o && t)
		return r->total.delta > r->own.delta ? &r->total : &r->own;
	return o ? &r->own : t ? &r->total : NULL;
}

size_t view_diff_offenders(const struct diff *d, double pct)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nrows; i++)
		n += offends(d, &d->rows[i], pct) != NULL;
	return n;
}

/* "hot_a", "hot_a shift.c:30", "do_syscall_64 [k]", "… (gone)": gone and
 * new only when the function is in no stack of one side. */
static void row_name(const struct diff_row *r, bool lines, bool full, char *out, size_t size)
{
	char func[512], file[256] = "", sn[512];

	text_sanitize(view_func_name(r->func, full, sn, sizeof(sn)), func, sizeof(func));
	if (lines && r->file) {
		char f[200];
		text_sanitize(r->file, f, sizeof(f));
		snprintf(file, sizeof(file), " %s:%d", f, r->line);
	}
	snprintf(out, size, "%s%s%s%s", func, r->kernel ? " [k]" : "", file,
		 r->gone    ? " (gone)"
		 : r->added ? " (new)"
			    : "");
}

/* The table: own and total share side by side, a star after a
 * significant Delta. */
#define TABLE_GROUPS "-------- own --------  ------- total -------"
#define TABLE_HEAD                                                                                 \
	"%6s %6s %7s  %6s %6s %7s   %s", "Base%", "Now%", "Delta", "Base%", "Now%", "Delta",       \
	    "Function"

static void table_row(const struct diff_row *r, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%6.1f %6.1f %+7.1f%c %6.1f %6.1f %+7.1f%c  %s", r->own.base_pct,
		 r->own.new_pct, r->own.delta, r->own.sig ? '*' : ' ', r->total.base_pct,
		 r->total.new_pct, r->total.delta, r->total.sig ? '*' : ' ', name);
}

static void side_head(FILE *f, const char *what, const char *label, const struct diff_side *s)
{
	char n[32], l[400];

	text_count(s->samples, n, sizeof(n));
	text_sanitize(label, l, sizeof(l));
	fprintf(f, "%s %s: %zu file%s, %s samples\n", what, l, s->nfiles, s->nfiles == 1 ? "" : "s",
		n);
}

static void test_head(FILE *f, const struct diff *d)
{
	bool secs = d->test == DIFF_TEST_SECONDS;

	switch (d->test) {
	case DIFF_TEST_SECONDS:
	case DIFF_TEST_FILES: /* the units: seconds, or files (repetitions) */
		fprintf(f,
			"test: Welch's t-test on each function's own and total share per %s (base "
			"%zu%s, new "
			"%zu%s), Holm-corrected; * = p < %.2f\n",
			secs ? "second" : "file", d->side[0].units, secs ? " s" : "",
			d->side[1].units, secs ? " s" : " repetitions", DIFF_ALPHA);
		break;
	case DIFF_TEST_SAMPLES:
		fprintf(f,
			"test: two-proportion z-test on each function's own and total sample "
			"counts, Holm-corrected; * = p < "
			"%.2f\n"
			"caveat: the files carry no time and there is one a side, so every sample "
			"counts as independent, which they are not: stars overstate certainty "
			"(record with stacktop record, or give several files a side)\n",
			DIFF_ALPHA);
		break;
	case DIFF_TEST_NONE:
		fprintf(f, "test: %s\n", d->why_none);
		break;
	}
}

static void gate(FILE *f, const struct diff *d, const struct view_diff_opts *o)
{
	char name[800];
	size_t n = view_diff_offenders(d, o->fail_above);
	const struct diff_share *sh;

	if (!n) {
		fprintf(f, "fail-above %.1f: no significant increase above %.1f points\n",
			o->fail_above, o->fail_above);
		return;
	}
	fprintf(f, "fail-above %.1f: %zu function%s grew by significantly more than %.1f points:\n",
		o->fail_above, n, n == 1 ? "" : "s", o->fail_above);
	for (size_t i = 0; i < d->nrows; i++)
		if ((sh = offends(d, &d->rows[i], o->fail_above))) {
			row_name(&d->rows[i], o->lines, true, name, sizeof(name));
			fprintf(f, "  %+.1f  %s%s\n", sh->delta, name,
				sh == &d->rows[i].total && !d->rows[i].own.sig ? " (total)" : "");
		}
}

int view_diff_text(const struct diff *d, const struct view_diff_opts *o, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	char name[800], a[160], b[160], line[1000];
	int shown = 0;

	if (!f)
		return -ENOMEM;
	side_head(f, "base", o->base_label, &d->side[0]);
	side_head(f, "new ", o->new_label, &d->side[1]);
	if (d->side[0].nsummaries || d->side[1].nsummaries) {
		snprintf(a, sizeof(a), "(no summary)");
		snprintf(b, sizeof(b), "(no summary)");
		if (d->side[0].nsummaries)
			view_diff_summary(&d->side[0].summary, a, sizeof(a));
		if (d->side[1].nsummaries)
			view_diff_summary(&d->side[1].summary, b, sizeof(b));
		fprintf(f, "run%s: %s → %s\n",
			d->side[0].nsummaries > 1 || d->side[1].nsummaries > 1 ? " (mean a file)"
									       : "",
			a, b);
	}
	test_head(f, d);
	fprintf(f, "\n" TABLE_GROUPS "\n");
	fprintf(f, TABLE_HEAD);
	fputc('\n', f);
	for (size_t i = 0; i < d->nrows && shown < o->limit; i++, shown++) {
		row_name(&d->rows[i], o->lines, true, name, sizeof(name));
		table_row(&d->rows[i], name, line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	if ((size_t)shown < d->nrows)
		fprintf(f, "(%zu more rows; --limit shows more)\n", d->nrows - (size_t)shown);
	if (o->fail_above >= 0) {
		fputc('\n', f);
		gate(f, d, o);
	}
	return fclose(f) ? -ENOMEM : 0;
}

/* Red grew, blue shrank (both starred), grey not significant. */
static uint16_t share_attr(const struct diff_share *s)
{
	if (!s->sig)
		return GRID_DIM;
	return (s->delta > 0 ? GRID_COLOR(GRID_C_RED) : GRID_COLOR(GRID_C_BLUE)) | GRID_BOLD;
}

/* A row by its change: the larger significant one of own and total. */
static uint16_t row_attr(const struct diff_row *r)
{
	return share_attr(diff_row_change(r));
}

#define ATTR_MAX_DEPTH 1024 /* deeper boxes stay grey */

uint16_t view_diff_attr(const void *ctx, const struct icicle *t, uint32_t node)
{
	const struct diff *d = ctx;
	uint32_t chain[ATTR_MAX_DEPTH], p = t->inverted ? DIFF_PATH_BOTTOM : DIFF_PATH_TOP;
	size_t n = 0;
	int64_t k;

	/* The box's path, root first (a per-thread root is no function). */
	for (uint32_t id = node; id != ICICLE_ROOT && id != ICICLE_NONE && id < t->n;
	     id = t->nodes[id].parent) {
		if (t->per_thread && t->nodes[id].depth == 1)
			break;
		if (n == ATTR_MAX_DEPTH)
			return GRID_DIM;
		chain[n++] = id;
	}
	if (!d || !n)
		return GRID_DIM;
	while (n--) {
		const struct icicle_node *nd = &t->nodes[chain[n]];
		if ((k = diff_path_find(d, p, nd->name, nd->kernel)) < 0)
			return GRID_DIM;
		p = (uint32_t)k;
	}
	return share_attr(&d->paths[p].total);
}

/* The line above the table: what is compared, and the verdict's basis,
 * the longest form that fits width: at 80 columns the full one was cut
 * mid-word ("Welch per second (9 vs 10), Ho"), so what a star means comes
 * right after the title and the test's name is shortened, then dropped. */
static void test_line(const struct diff *d, const char *title, int width, char *buf, size_t size)
{
	const char *unit = d->test == DIFF_TEST_SECONDS ? "second" : "file";

	switch (d->test) {
	case DIFF_TEST_NONE:
		snprintf(buf, size, "diff: %s: %s", title, d->why_none);
		return;
	case DIFF_TEST_SECONDS:
	case DIFF_TEST_FILES:
		snprintf(buf, size, "diff: %s: Welch per %s (%zu vs %zu), Holm; * p < %.2f", title,
			 unit, d->side[0].units, d->side[1].units, DIFF_ALPHA);
		if (text_width(buf) <= width)
			return;
		snprintf(buf, size, "diff: %s: * p < %.2f, Welch %zu vs %zu %ss", title, DIFF_ALPHA,
			 d->side[0].units, d->side[1].units, unit);
		break;
	case DIFF_TEST_SAMPLES:
		snprintf(buf, size,
			 "diff: %s: two-proportion test, Holm; * p < %.2f (caveat: samples taken "
			 "as independent, so stars overstate certainty)",
			 title, DIFF_ALPHA);
		if (text_width(buf) <= width)
			return;
		snprintf(buf, size, "diff: %s: * p < %.2f, samples as independent: overstated",
			 title, DIFF_ALPHA);
		break;
	}
	if (text_width(buf) > width)
		snprintf(buf, size, "diff: %s: * p < %.2f", title, DIFF_ALPHA);
}

void view_diff_render(struct grid *g, const struct view_header *h, const struct diff *d, bool lines,
		      bool full_names, const char *title, bool live)
{
	uint16_t hdr = GRID_COLOR(GRID_C_HEADER);
	char buf[600], name[800], line[1000];
	int y = h ? view_header_render(g, 0, h) : 0;

	if (!d) {
		view_put_centered(g, y + 2, "no baseline: press b to mark the last 10 s, then D",
				  GRID_DIM);
		view_footer_render(g, "D leave diff  b baseline  q quit");
		return;
	}
	test_line(d, title, g->w, buf, sizeof(buf));
	grid_put(g, 0, y++, buf, GRID_BOLD, -1);
	grid_put(g, 0, y, "legend: ", GRID_DIM, -1);
	grid_put(g, 8, y, "grew", GRID_COLOR(GRID_C_RED) | GRID_BOLD, -1);
	grid_put(g, 13, y, "shrank", GRID_COLOR(GRID_C_BLUE) | GRID_BOLD, -1);
	grid_put(g, 20, y++, "not significant", GRID_DIM, -1);
	grid_put(g, 0, y++, TABLE_GROUPS, GRID_DIM, -1);
	grid_fill(g, 0, y, g->w, L' ', hdr);
	grid_printf(g, 0, y++, hdr, -1, TABLE_HEAD);
	for (size_t i = 0; i < d->nrows && y < g->h - 1; i++, y++) {
		row_name(&d->rows[i], lines, full_names, name, sizeof(name));
		table_row(&d->rows[i], name, line, sizeof(line));
		grid_put(g, 0, y, line, row_attr(&d->rows[i]), -1);
	}
	view_footer_render(g, live ? "D leave diff  b new baseline  2 icicle  L lines  q quit"
				   : "D plain views  2 icicle (diff colours)  q quit");
}
