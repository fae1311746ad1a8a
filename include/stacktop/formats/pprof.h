/*
 * pprof — the perftools.profiles.Profile protobuf (src/formats/
 * profile.proto), gzip-compressed, as `go tool pprof` reads it.
 *
 * Written (pprof_render): one Location per sampled pc, with a Line per
 * inlined function (innermost first) and the function they were inlined
 * into last (pprof's own model); one Function per (name, file); one
 * Mapping per module name (the window keeps names; a frame that knows
 * where its code is sets the mapping's path, build-id and file offset, so
 * annotate works offline); sample types samples/count and cpu|wall/
 * nanoseconds with the period; "tid", "thread" and (per_second) "second"
 * labels on each sample; comments: who wrote it, any narrowing, the run's
 * summary "stacktop: {wall_s=...}", its per-second CPU "stacktop:
 * {cpu_1s=...}" and where it sits "stacktop: {cpu_1s_at=K}".
 *
 * Read (pprof_load, a plain protobuf: report inflates gzip first): the
 * weight is the "count" sample value, else the default (or last) value
 * divided by the period; threads from "tid"/"thread_id" and "thread"/
 * "thread_name" labels, seconds from "second"; mode and period from the
 * period type. protobuf-c may allocate at most pprof_unpack_limit(size) =
 * 32 times the size plus 16 MiB (counted request by request, plus 16 bytes
 * each for malloc's own header). A render reverses the selection's frame
 * ids and restores them (leaf first for pprof). A load fails with -EINVAL
 * (corrupt protobuf or profile: the sentence says what), -EFBIG (over the
 * unpack budget or too many frames) or -ENOMEM.
 *
 * Both go through pprof_format (format.h); it sniffs a file with a control
 * byte (not a line break or tab) in its first 512 bytes: binary.
 */
#ifndef STACKTOP_PPROF_H
#define STACKTOP_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "stacktop/formats/format.h"

extern const struct format_ops pprof_format;

/* What unpacking a protobuf of len bytes may allocate (see the head). */
size_t pprof_unpack_limit(size_t len);

/*
 * The tables of a profile being written: strings (index 0 is ""), one
 * Function per (name, file), one Mapping per module name, one Location per
 * pc (its inline levels as Lines), each made on first use. pprof_render
 * builds its profile with them, memexport its memory profile. Call order:
 * new, then str and stack as the samples are made, then fill (once, last:
 * the profile points into the tables), pack the profile, free.
 */
struct frames;
struct pprof_tables;
struct Perftools__Profiles__Profile;
/* The name of frame id's function (not called for an inlined frame: its
 * function's own name serves). A string valid until the next call. */
typedef const char *(*pprof_label_fn)(void *ctx, uint32_t id);

/* Tables over fr's frame ids; label names them. 0 or -ENOMEM. */
int pprof_tables_new(struct pprof_tables **out, struct frames *fr, pprof_label_fn label, void *ctx);
/* The index of s (control characters made '?') in the string table, or
 * -ENOMEM. */
int64_t pprof_tables_str(struct pprof_tables *t, const char *s);
/* The locations of a stack of n frame ids given root first, written leaf
 * first into loc (room for n), their number into *nloc. 0 or -ENOMEM. */
int pprof_tables_stack(struct pprof_tables *t, const uint32_t *root_first, size_t n, uint64_t *loc,
		       size_t *nloc);
/* The profile's string, function, location and mapping tables set to
 * these, valid until pprof_tables_free. 0 or -ENOMEM. */
int pprof_tables_fill(struct pprof_tables *t, struct Perftools__Profiles__Profile *prof);
void pprof_tables_free(struct pprof_tables *t);

#endif
