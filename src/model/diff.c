/*
 * diff — compare two sets of saved profiles function by function, with a
 * significance test per function (see diff.h for the statistics and why).
 *
 * How: each side is a snapshot of (leaf, file, second, count) cells, filled
 * from profile files (formats/diffload.c) or from a window; each cell adds
 * its count to a cell (row, file, second) of its side, where the row is
 * the leaf's key — (kernel, function), plus (file, line) with lines —
 * interned as a string. Cells are sorted by row once all files are
 * in, so each row's per-unit counts are one run of the array; the test
 * then turns counts into shares per unit (second or file) and compares the
 * two sides' shares. Rows keep copies of their names: the snapshots (and
 * whatever they were taken from) may be freed once diff_compare returns.
 */
#include "stacktop/model/diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/stats.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/model/window.h"

#define DIFF_SMALL_UNIT 0.25 /* of the median: partial seconds left out */

struct cell {
	uint32_t row;
	uint32_t file;
	int32_t second; /* -1: the file has no time */
	uint64_t count;
};

struct side_acc {
	struct cell *cells;
	size_t ncells, capcells;
	uint64_t *rowcount;		/* per row */
	int32_t maxsec[DIFF_MAX_FILES]; /* per file, -1 when untimed */
	uint64_t untimed;		/* bit per file: a cell without a second */
	size_t nfiles;
};

struct diff_impl {
	struct diff pub; /* first: diff_free casts */
	struct strpool names;
};

/* A snapshot: (leaf, file, second, count) cells with their own names, so a
 * baseline outlives the window it was taken from. */
struct snap_cell {
	const char *func, *file; /* pooled */
	int line;
	bool kernel;
	uint32_t fileno;
	int32_t second;
	uint64_t count;
};

struct diff_snap {
	struct strpool names;
	struct snap_cell *cells;
	size_t ncells, cap;
	uint32_t nfiles;
	struct summary summary; /* sum over the files that have one */
	size_t nsummaries;
};

struct builder {
	struct diff_impl *d;
	const struct diff_opts *o;
	struct strpool keys;
	size_t caprows;
	struct side_acc side[2];
};

int diff_split_list(char *buf, const char **paths, size_t max, size_t *n)
{
	char *p = buf;

	*n = 0;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p || *n == max)
			return -EINVAL;
		paths[(*n)++] = p;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static const char *name_copy(struct builder *b, const char *s)
{
	return s ? strpool_cstr(&b->d->names, s) : NULL;
}

/* The row of a snapshot cell's leaf (made when new); -ENOMEM. */
static int64_t row_of(struct builder *b, const struct snap_cell *c)
{
	const char *func = c->func ? c->func : "?";
	char key[1024];
	int64_t k;
	int n;

	/* Not the module: folded files do not name it, and a folded base
	 * must still meet its pprof new. */
	if (b->o->lines)
		n = snprintf(key, sizeof(key), "%d\x1f%s\x1f%s\x1f%d", c->kernel, func,
			     c->file ? c->file : "", c->line);
	else
		n = snprintf(key, sizeof(key), "%d\x1f%s", c->kernel, func);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(key))
		n = sizeof(key) - 1; /* a longer name shares a row with its prefix */
	if ((k = strpool_index(&b->keys, key, (size_t)n)) < 0)
		return k;
	if ((size_t)k < b->d->pub.nrows)
		return k;
	/* New: the row, and its count on both sides. */
	if (array_grow((void **)&b->d->pub.rows, &b->caprows, (size_t)k + 1,
		       sizeof(struct diff_row)))
		return -ENOMEM;
	for (int s = 0; s < 2; s++) {
		uint64_t *rc = realloc(b->side[s].rowcount, b->caprows * sizeof(*rc));
		if (!rc)
			return -ENOMEM;
		rc[k] = 0;
		b->side[s].rowcount = rc;
	}
	struct diff_row *r = &b->d->pub.rows[k];
	*r = (struct diff_row){.func = name_copy(b, func),
			       .file = b->o->lines && c->file ? name_copy(b, c->file) : NULL,
			       .line = b->o->lines ? c->line : 0,
			       .kernel = c->kernel};
	if (!r->func || (b->o->lines && c->file && !r->file))
		return -ENOMEM;
	b->d->pub.nrows = (size_t)k + 1;
	return k;
}

static int snap_push(struct diff_snap *sn, const struct frame *f, uint32_t fileno, int32_t second,
		     uint64_t count)
{
	struct snap_cell c = {.line = f->sym.line,
			      .kernel = f->kernel,
			      .fileno = fileno,
			      .second = second,
			      .count = count};

	if ((f->sym.func && !(c.func = strpool_cstr(&sn->names, f->sym.func))) ||
	    (f->sym.file && !(c.file = strpool_cstr(&sn->names, f->sym.file))) ||
	    array_grow((void **)&sn->cells, &sn->cap, sn->ncells + 1, sizeof(*sn->cells)))
		return -ENOMEM;
	sn->cells[sn->ncells++] = c;
	return 0;
}

int diff_snap_new(struct diff_snap **out)
{
	return (*out = calloc(1, sizeof(**out))) ? 0 : -ENOMEM;
}

void diff_snap_free(struct diff_snap *sn)
{
	if (!sn)
		return;
	strpool_free(&sn->names);
	free(sn->cells);
	free(sn);
}

int diff_snap_file(struct diff_snap *sn, const struct summary *sum)
{
	if (sn->nfiles >= DIFF_MAX_FILES)
		return -EINVAL;
	if (sum) {
		struct summary *m = &sn->summary;
		m->wall_s += sum->wall_s;
		m->cpu_s += sum->cpu_s;
		m->avg_cpu += sum->avg_cpu;
		m->peak_cpu += sum->peak_cpu;
		m->peak_rss += sum->peak_rss;
		sn->nsummaries++;
	}
	sn->nfiles++;
	return 0;
}

int diff_snap_add(struct diff_snap *sn, const struct frame *leaf, int32_t second, uint64_t count)
{
	if (!sn->nfiles)
		return -EINVAL;
	return snap_push(sn, leaf, sn->nfiles - 1, second, count);
}

int diff_snap_window(struct window *w, uint64_t now_ns, unsigned seconds, bool lines,
		     struct diff_snap **out)
{
	uint64_t newest = now_ns / window_bucket_ns(w), num;
	const struct window_count *wc;
	struct diff_snap *sn;
	size_t n;
	int rc = 0;

	if (lines && (rc = window_resolve_lines(w, 0)))
		return rc;
	if ((rc = diff_snap_new(&sn)))
		return rc;
	sn->nfiles = 1;
	for (size_t k = 0; k < window_nbuckets(w) && !rc; k++) {
		if (!(wc = window_bucket_counts(w, k, &num, &n)) || num > newest ||
		    num + seconds <= newest)
			continue;
		for (size_t i = 0; i < n && !rc; i++) {
			const struct window_node *nd = window_node(w, wc[i].node);
			const struct frame *f = nd ? frames_get(window_frames(w), nd->frame) : NULL;
			if (f)
				rc = snap_push(sn, f, 0, (int32_t)(num + seconds - newest - 1),
					       wc[i].count);
		}
	}
	if (rc) {
		diff_snap_free(sn);
		return rc;
	}
	*out = sn;
	return 0;
}

/* A snapshot into side s of the builder. */
static int side_add(struct builder *b, int s, const struct diff_snap *sn)
{
	struct side_acc *a = &b->side[s];
	struct diff_side *ds = &b->d->pub.side[s];

	a->nfiles = ds->nfiles = sn->nfiles;
	for (uint32_t f = 0; f < sn->nfiles; f++)
		a->maxsec[f] = -1;
	a->untimed = 0;
	for (size_t i = 0; i < sn->ncells; i++) {
		const struct snap_cell *c = &sn->cells[i];
		int64_t row = row_of(b, c);
		if (row < 0)
			return (int)row;
		if (array_grow((void **)&a->cells, &a->capcells, a->ncells + 1, sizeof(*a->cells)))
			return -ENOMEM;
		a->cells[a->ncells++] = (struct cell){.row = (uint32_t)row,
						      .file = c->fileno,
						      .second = c->second,
						      .count = c->count};
		a->rowcount[row] += c->count;
		ds->samples += c->count;
		if (c->second < 0)
			a->untimed |= 1ull << c->fileno;
		else if (c->second > a->maxsec[c->fileno])
			a->maxsec[c->fileno] = c->second;
	}
	for (uint32_t f = 0; f < sn->nfiles; f++)
		if (a->untimed & (1ull << f))
			a->maxsec[f] = -1;
	ds->summary = sn->summary;
	ds->nsummaries = sn->nsummaries;
	return 0;
}

static int cmp_cell(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->second > b->second) - (a->second < b->second);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* The test's observation units of one side: the distinct (file, second)
 * pairs that hold samples (or files, when the test is per file), sorted,
 * with their totals and which take part (partial seconds do not). Sparse:
 * a hostile "second" label costs nothing, and a row's share vector is
 * never built (only its sum and sum of squares over the units). */
struct unit {
	uint32_t file;
	int32_t second;
	uint64_t total;
	bool keep;
};

struct units {
	struct unit *u;
	size_t n, nkept;
};

static int cmp_unit(const void *x, const void *y)
{
	const struct unit *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->second > b->second) - (a->second < b->second);
}

static int32_t unit_second(const struct cell *c, bool seconds)
{
	return seconds ? c->second : -1;
}

/* The unit of a cell (binary search); always found. */
static struct unit *unit_of(const struct units *u, const struct cell *c, bool seconds)
{
	struct unit k = {.file = c->file, .second = unit_second(c, seconds)};
	return bsearch(&k, u->u, u->n, sizeof(*u->u), cmp_unit);
}

static int units_build(struct units *u, const struct side_acc *a, bool seconds)
{
	uint64_t *sorted;
	size_t nz = 0, m = 0;

	u->n = u->nkept = 0;
	if (!(u->u = calloc(a->ncells + 1, sizeof(*u->u))))
		return -ENOMEM;
	for (size_t i = 0; i < a->ncells; i++)
		u->u[i] = (struct unit){.file = a->cells[i].file,
					.second = unit_second(&a->cells[i], seconds)};
	qsort(u->u, a->ncells, sizeof(*u->u), cmp_unit);
	for (size_t i = 0; i < a->ncells; i++)
		if (!m || cmp_unit(&u->u[m - 1], &u->u[i]))
			u->u[m++] = u->u[i];
	u->n = m;
	for (size_t i = 0; i < a->ncells; i++)
		unit_of(u, &a->cells[i], seconds)->total += a->cells[i].count;
	if (!(sorted = calloc(u->n + 1, sizeof(*sorted))))
		return -ENOMEM;
	for (size_t i = 0; i < u->n; i++)
		if (u->u[i].total)
			sorted[nz++] = u->u[i].total;
	qsort(sorted, nz, sizeof(*sorted), cmp_u64);
	uint64_t median = nz ? sorted[nz / 2] : 0;
	free(sorted);
	for (size_t i = 0; i < u->n; i++) {
		u->u[i].keep =
		    u->u[i].total > 0 &&
		    (!seconds || (double)u->u[i].total >= DIFF_SMALL_UNIT * (double)median);
		u->nkept += u->u[i].keep;
	}
	return 0;
}

static void units_free(struct units *u)
{
	free(u->u);
}

/* One row's shares over the kept units of a side, as moments (units
 * without the row count as share 0), from its run of cells [*pos, ...),
 * sorted by (file, second). */
struct moments {
	size_t n;
	double mean, var;
};

static struct moments row_moments(const struct units *u, const struct side_acc *a, size_t *pos,
				  uint32_t row, bool seconds)
{
	double sum = 0, sq = 0;
	struct moments mo = {.n = u->nkept};

	while (*pos < a->ncells && a->cells[*pos].row == row) {
		const struct unit *un = unit_of(u, &a->cells[*pos], seconds);
		uint64_t c = 0;
		/* cells of one unit are next to each other in the run */
		do
			c += a->cells[(*pos)++].count;
		while (*pos < a->ncells && a->cells[*pos].row == row &&
		       unit_of(u, &a->cells[*pos], seconds) == un);
		if (un && un->keep) {
			double sh = (double)c / (double)un->total;
			sum += sh;
			sq += sh * sh;
		}
	}
	if (mo.n) {
		mo.mean = sum / (double)mo.n;
		mo.var =
		    mo.n > 1 ? (sq - (double)mo.n * mo.mean * mo.mean) / (double)(mo.n - 1) : 0;
		if (mo.var < 0)
			mo.var = 0; /* rounding */
	}
	return mo;
}

static enum diff_test pick_test(struct diff *d, const struct builder *b)
{
	for (int s = 0; s < 2; s++) {
		d->side[s].timed = b->side[s].nfiles > 0;
		for (size_t f = 0; f < b->side[s].nfiles; f++)
			if (b->side[s].maxsec[f] < 0)
				d->side[s].timed = false;
	}
	if (d->side[0].timed && d->side[1].timed)
		return DIFF_TEST_SECONDS;
	if (d->side[0].nfiles >= 2 && d->side[1].nfiles >= 2)
		return DIFF_TEST_FILES;
	return DIFF_TEST_SAMPLES;
}

/* p-values per row, Holm over the tested ones, stars. */
static int run_tests(struct builder *b)
{
	struct diff *d = &b->d->pub;
	struct units u[2] = {0};
	size_t pos[2] = {0, 0}, *idx = NULL, ntested = 0;
	double *p = NULL, *adj = NULL;
	bool seconds;
	int rc = -ENOMEM;

	d->test = pick_test(d, b);
	seconds = d->test == DIFF_TEST_SECONDS;
	for (int s = 0; s < 2; s++) {
		qsort(b->side[s].cells, b->side[s].ncells, sizeof(struct cell), cmp_cell);
		if (units_build(&u[s], &b->side[s], seconds))
			goto out;
		d->side[s].units = d->test == DIFF_TEST_SAMPLES ? 0 : u[s].nkept;
	}
	if (seconds && (u[0].nkept < STATS_MIN_UNITS || u[1].nkept < STATS_MIN_UNITS)) {
		snprintf(d->why_none, sizeof(d->why_none),
			 "too few seconds to test (base %zu, new %zu; %d a side needed): no "
			 "stars",
			 u[0].nkept, u[1].nkept, STATS_MIN_UNITS);
		d->test = DIFF_TEST_NONE;
	}
	if (!(p = calloc(d->nrows + 1, sizeof(*p))) ||
	    !(adj = calloc(d->nrows + 1, sizeof(*adj))) ||
	    !(idx = calloc(d->nrows + 1, sizeof(*idx))))
		goto out;
	for (uint32_t r = 0; r < d->nrows; r++) {
		struct diff_row *row = &d->rows[r];
		struct stats_result sr = {.p = 1};
		struct moments ma, mb;

		row->base_pct = d->side[0].samples ? 100.0 * (double)b->side[0].rowcount[r] /
							 (double)d->side[0].samples
						   : 0;
		row->new_pct = d->side[1].samples ? 100.0 * (double)b->side[1].rowcount[r] /
							(double)d->side[1].samples
						  : 0;
		row->delta = row->new_pct - row->base_pct;
		ma = row_moments(&u[0], &b->side[0], &pos[0], r, seconds);
		mb = row_moments(&u[1], &b->side[1], &pos[1], r, seconds);
		row->p = row->p_adj = 1;
		row->tested = d->test != DIFF_TEST_NONE &&
			      (row->base_pct + row->new_pct) / 2 >= DIFF_MIN_TESTED_PCT;
		if (!row->tested)
			continue;
		if (d->test == DIFF_TEST_SAMPLES)
			stats_two_prop(b->side[0].rowcount[r], d->side[0].samples,
				       b->side[1].rowcount[r], d->side[1].samples, &sr);
		else if (stats_welch_moments(ma.mean, ma.var, ma.n, mb.mean, mb.var, mb.n, &sr))
			sr.p = 1;
		row->p = sr.p;
		row->test = sr;
		row->test.se *= 100; /* shares → points */
		row->test_delta =
		    d->test == DIFF_TEST_SAMPLES ? row->delta : 100 * (mb.mean - ma.mean);
		idx[ntested] = r;
		p[ntested++] = sr.p;
	}
	{
		/* Holm over the tested rows (idx[] maps them back). */
		size_t *scratch = calloc(ntested + 1, sizeof(*scratch));
		if (!scratch)
			goto out;
		stats_holm(p, adj, scratch, ntested);
		free(scratch);
	}
	for (size_t i = 0; i < ntested; i++) {
		struct diff_row *row = &d->rows[idx[i]];
		row->p_adj = adj[i];
		row->sig = adj[i] < DIFF_ALPHA;
	}
	rc = 0;
out:
	units_free(&u[0]);
	units_free(&u[1]);
	free(p);
	free(adj);
	free(idx);
	return rc;
}

/* A change worth a row at the top: starred and at least half a point of
 * the profile. */
static bool material(const struct diff_row *r)
{
	return r->sig && fabs(r->delta) >= DIFF_MIN_TESTED_PCT;
}

/* Material changes first, by |delta|; then every other row by its larger
 * share: ordered by |delta| alone, a 60% function that did not move sank
 * below 0.1% kernel rows that moved by 0.1 (issue 24). */
static int cmp_row(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	if (material(a) != material(b))
		return material(a) ? -1 : 1;
	if (material(a) && fabs(a->delta) != fabs(b->delta))
		return fabs(a->delta) > fabs(b->delta) ? -1 : 1;
	double sa = fmax(a->base_pct, a->new_pct), sb = fmax(b->base_pct, b->new_pct);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->new_pct != b->new_pct)
		return a->new_pct > b->new_pct ? -1 : 1;
	return strcmp(a->func, b->func);
}

static void mean_summaries(struct diff *d)
{
	for (int s = 0; s < 2; s++) {
		struct diff_side *ds = &d->side[s];
		double n = (double)ds->nsummaries;
		if (!ds->nsummaries)
			continue;
		ds->summary.wall_s /= n;
		ds->summary.cpu_s /= n;
		ds->summary.avg_cpu /= n;
		ds->summary.peak_cpu /= n;
		ds->summary.peak_rss = (uint64_t)((double)ds->summary.peak_rss / n);
	}
}

int diff_compare(const struct diff_snap *base, const struct diff_snap *new_,
		 const struct diff_opts *o, struct diff **out)
{
	struct builder b = {.o = o};
	int rc;

	*out = NULL;
	if (!(b.d = calloc(1, sizeof(*b.d))))
		return -ENOMEM;
	if (!(rc = side_add(&b, 0, base)) && !(rc = side_add(&b, 1, new_)) &&
	    !(rc = run_tests(&b))) {
		mean_summaries(&b.d->pub);
		qsort(b.d->pub.rows, b.d->pub.nrows, sizeof(struct diff_row), cmp_row);
	}
	for (int s = 0; s < 2; s++) {
		free(b.side[s].cells);
		free(b.side[s].rowcount);
	}
	strpool_free(&b.keys);
	if (rc) {
		diff_free(&b.d->pub);
		return rc;
	}
	*out = &b.d->pub;
	return 0;
}

void diff_free(struct diff *d)
{
	struct diff_impl *di = (struct diff_impl *)d;

	if (!d)
		return;
	free(d->rows);
	strpool_free(&di->names);
	free(di);
}
