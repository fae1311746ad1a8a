/*
 * diffload — profile files into diff snapshots, and `stacktop diff` from
 * two lists of them (see diffload.h).
 */
#include "stacktop/formats/diffload.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "stacktop/formats/report.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/diff.h"
#include "stacktop/model/spikes.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/symbols/frames.h"

#define DIFFLOAD_MAX_SECOND 100000000 /* past this a file's seconds are not trusted */

int diffload_file(struct diff_snap *sn, struct frames *fr, const char *path, char *err,
		  size_t errsz)
{
	struct stackset *ss;
	struct stackset_stack st;
	bool timed;
	int rc;

	if ((rc = report_load(path, fr, &ss, err, errsz)))
		return rc;
	if ((rc = diff_snap_file(sn, stackset_summary(ss)))) {
		text_errf(err, errsz, "diff compares at most %d files a side.", DIFF_MAX_FILES);
		stackset_free(ss);
		return rc;
	}
	timed = stackset_timed(ss);
	for (size_t i = 0; i < stackset_nstacks(ss) && timed; i++) {
		stackset_stack(ss, i, &st);
		timed = st.second <= DIFFLOAD_MAX_SECOND;
	}
	/* Whole stacks: the diff compares total shares and paths too, and
	 * leaves out kernel frames itself (diff_opts.hide_kernel). */
	for (size_t i = 0; i < stackset_nstacks(ss) && !rc; i++) {
		stackset_stack(ss, i, &st);
		rc = diff_snap_add(sn, fr, st.ids, st.n, timed ? st.second : -1, st.weight);
	}
	if (rc)
		text_errf(err, errsz, "%s: out of memory comparing it.", path);
	stackset_free(ss);
	return rc;
}

int diffload_build(const char *const *base, size_t nbase, const char *const *new_, size_t nnew,
		   const struct diff_opts *o, struct diff **out, char *err, size_t errsz)
{
	struct diff_snap *sn[2] = {NULL, NULL};
	struct frames *fr = NULL;
	int rc = 0;

	*out = NULL;
	if (!nbase || !nnew || nbase > DIFF_MAX_FILES || nnew > DIFF_MAX_FILES) {
		text_errf(err, errsz, "diff compares 1 to %d files a side.", DIFF_MAX_FILES);
		return -EINVAL;
	}
	if (diff_snap_new(&sn[0]) || diff_snap_new(&sn[1]) || frames_new(NULL, &fr)) {
		text_errf(err, errsz, "out of memory.");
		rc = -ENOMEM;
	}
	for (size_t i = 0; i < nbase && !rc; i++)
		rc = diffload_file(sn[0], fr, base[i], err, errsz);
	for (size_t i = 0; i < nnew && !rc; i++)
		rc = diffload_file(sn[1], fr, new_[i], err, errsz);
	/* The names are the snapshots' own: the frames can go now. */
	frames_free(fr);
	if (!rc && (rc = diff_compare(sn[0], sn[1], o, out)))
		text_errf(err, errsz, "out of memory.");
	diff_snap_free(sn[0]);
	diff_snap_free(sn[1]);
	return rc;
}

/* A stack of the file at the index of its second's CPU value. */
struct at_second {
	size_t c, i;
};

static int by_second(const void *a, const void *b)
{
	const struct at_second *x = a, *y = b;

	if (x->c != y->c)
		return x->c < y->c ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The stacks of ss whose second has a CPU value (ncpu of them from at),
 * sorted by it, and their count in *n. 0 or -ENOMEM. */
static int timed_stacks(const struct stackset *ss, int64_t at, size_t ncpu, struct at_second **out,
			size_t *nout)
{
	size_t ns = stackset_nstacks(ss), n = 0;
	struct at_second *ix = malloc((ns ? ns : 1) * sizeof(*ix));
	struct stackset_stack st;

	*out = ix;
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < ns; i++) {
		stackset_stack(ss, i, &st);
		int64_t c = (int64_t)st.second - at;
		if (st.second >= 0 && c >= 0 && c < (int64_t)ncpu)
			ix[n++] = (struct at_second){(size_t)c, i};
	}
	qsort(ix, n, sizeof(*ix), by_second);
	*nout = n;
	return 0;
}

/* One second's stacks (ix[0..n), all of one second) as a snapshot. */
static int second_snap(const struct stackset *ss, const struct frames *fr,
		       const struct at_second *ix, size_t n, struct diff_snap **out)
{
	struct stackset_stack st;
	int rc;

	if ((rc = diff_snap_new(out)) || (rc = diff_snap_file(*out, NULL)))
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		stackset_stack(ss, ix[i].i, &st);
		rc = diff_snap_add(*out, fr, st.ids, st.n, 0, st.weight);
	}
	return rc;
}

int diffload_risers(const struct stackset *ss, const struct frames *fr, struct metrics *m)
{
	size_t ncpu, n = 0;
	const double *cpu = stackset_cpu(ss, &ncpu);
	struct at_second *ix = NULL;
	struct spikes *sp = NULL;
	int64_t at;
	int rc;

	if (!m->alert_rhythm || !ncpu || !stackset_cpu_at(ss, &at))
		return 0;
	if ((rc = timed_stacks(ss, at, ncpu, &ix, &n)) || (rc = spikes_new(&sp))) {
		free(ix);
		return rc;
	}
	for (size_t a = 0, b; a < n && !rc; a = b) {
		struct diff_snap *sn = NULL;
		for (b = a; b < n && ix[b].c == ix[a].c;)
			b++;
		if ((rc = second_snap(ss, fr, ix + a, b - a, &sn)))
			diff_snap_free(sn);
		else
			rc = spikes_keep(sp, sn, (double)(at + (int64_t)ix[a].c), cpu[ix[a].c], m);
	}
	if (!rc)
		rc = spikes_compare(sp, m);
	spikes_free(sp);
	free(ix);
	return rc;
}
