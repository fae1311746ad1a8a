/*
 * diffload — `stacktop diff`'s sides from profile files: each file read
 * through report_load (its caps hold) into a diff snapshot as one file of
 * the side, its whole stacks (own and total shares, call paths), then the
 * two snapshots compared (model/diff.h: the test, the rows).
 *
 * One frames table serves every file (report_load interns by name, so the
 * same function in two files is the same content); the snapshots copy the
 * names they keep, so the table and each stackset are freed as soon as
 * they are read. A file's seconds count only when every stack has one
 * under 100,000,000 (past that a file's seconds are not trusted).
 */
#ifndef STACKTOP_DIFFLOAD_H
#define STACKTOP_DIFFLOAD_H

#include <stdbool.h>
#include <stddef.h>

struct diff;
struct diff_opts;
struct diff_snap;
struct frames;

/* path into sn as its next file, frames interned in fr (kernel frames
 * are kept: diff_opts.hide_kernel leaves them out when comparing). 0, or
 * -errno with one sentence in err (the file cannot be read or parsed, too
 * many files, out of memory). */
int diffload_file(struct diff_snap *sn, struct frames *fr, const char *path, char *err,
		  size_t errsz);

/* Load base[0..nbase) and new[0..nnew) and compare (diff_compare). 0, or
 * -errno with one sentence in err (a file that cannot be read or parsed,
 * named). The caller frees *out with diff_free. */
int diffload_build(const char *const *base, size_t nbase, const char *const *new_, size_t nnew,
		   const struct diff_opts *o, struct diff **out, char *err, size_t errsz);

/* What rises in the spikes of a recorded file (report): the seconds of ss
 * whose CPU it carries (cpu_1s, placed by cpu_1s_at; the stacks' second
 * labels) each become a snapshot kept by model/spikes, oldest first, under
 * its budget (SPIKES_MAX_SECONDS, SPIKES_BUDGET: one second's snapshot
 * more at the peak), then spike seconds are compared with calm ones by m's
 * rhythm (spikes_compare), the risers into m. Nothing without a rhythm in
 * m, without cpu_1s_at, or without timed stacks. Names are interned in fr
 * (the frames table the stackset was read with). 0 or -ENOMEM. */
struct metrics;
struct stackset;
int diffload_risers(const struct stackset *ss, const struct frames *fr, struct metrics *m);

#endif
