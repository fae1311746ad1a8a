/*
 * diffload — profile files into diff snapshots, and `stacktop diff` from
 * two lists of them (see diffload.h).
 */
#include "stacktop/formats/diffload.h"

#include <errno.h>
#include <stdint.h>

#include "stacktop/formats/report.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/lib/text.h"
#include "stacktop/model/diff.h"
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
