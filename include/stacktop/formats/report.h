/*
 * report — a saved profile (folded stacks, pprof: gzip-compressed or
 * plain protobuf, or speedscope JSON) as a source of samples, for `stacktop report FILE`.
 *
 * report_load parses the file into the report's own list of stacks: frame
 * ids of the frames table given (frames_named, by content; a wall-mode
 * wait leaf becomes frames_wait's pseudo frame again), a tid and a weight.
 * report_sampler_new makes it a struct sampler (mode NULL) whose first
 * collect delivers every stored stack once, as samples with frame_ids set
 * and time REPORT_TIME_NS; later collects deliver nothing. The frames table
 * must outlive the report's ids (frames_free after the window and the
 * report are done with them).
 *
 * Every sample is at time 0 (REPORT_TIME_NS). The caller creates a fresh
 * window (window_new(seconds, 1000000000, fr, ...), any seconds >= 1) and
 * must never advance it with the clock: pass report_now_ns(r) wherever a
 * view or window call wants "now" (window_span_s, renders), and nothing
 * expires. Samples without a thread (plain folded stacks, foreign pprof)
 * count under tid REPORT_TID_ANY, whose report_thread_name is "all".
 *
 * Memory caps (a hostile or amplifying file gets one sentence, -EFBIG,
 * never the machine's memory), all proportional to the input's size:
 *  - the file: at most 1 GiB;
 *  - gzip: inflates to at most 64 times the compressed size plus 1 MiB,
 *    and never over 512 MiB;
 *  - pprof: protobuf-c may allocate at most report_unpack_limit(size of
 *    the protobuf) = 32 times its size plus 16 MiB (counted request by
 *    request, plus 16 bytes each for malloc's own header);
 *  - frame ids of all stacks: report_ids_limit(size of the profile data) =
 *    8 per byte plus 1 Mi (4 bytes each), never over 2^25;
 *  - a folded line: 1 MiB;
 *  - speedscope JSON: at most 64 MiB (json-c's tree of it is tens of times
 *    bigger).
 * So a protobuf of N bytes costs at most about 32 N + 20 MiB once
 * unpacked (a gzip file of N bytes inflates to at most 64 N + 1 MiB, then
 * the same), plus our stacks, which grow with the frame ids admitted.
 *
 * Weights: folded counts and pprof "count" sample values are added as is;
 * without a count type the pprof value is divided by the period. When the
 * largest weight does not fit in 32 bits, all weights are scaled down by one
 * factor so the shares stay the same.
 */
#ifndef STACKTOP_REPORT_H
#define STACKTOP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/formats/export.h"

struct frames;
struct sampler;
struct window;
struct report;

#define REPORT_TIME_NS 0ull
#define REPORT_TID_ANY 1

enum report_format { REPORT_FOLDED, REPORT_PPROF, REPORT_SPEEDSCOPE };

/* Load path, interning its frames in fr. 0, or -errno with one sentence
 * in err (empty file, truncated gzip, corrupt protobuf, a folded line
 * without a count, a line over 1 MiB, too many frames, no samples). On
 * error *out is NULL (fr may hold some of the frames). */
int report_load(const char *path, struct frames *fr, struct report **out, char *err, size_t errsz);
/* The same from memory; name is used in messages. (Fuzzing, tests.) */
int report_load_mem(const void *data, size_t len, const char *name, struct frames *fr,
		    struct report **out, char *err, size_t errsz);
/* The caps above, for a profile of len bytes (protobuf, or folded text). */
size_t report_unpack_limit(size_t len);
size_t report_ids_limit(size_t len);
/* Free the report; a sampler made from it must be freed first. */
void report_free(struct report *r);

/* The report as a sampler (see the head of this file). r is borrowed and
 * must outlive it. 0 or -ENOMEM. */
int report_sampler_new(struct report *r, struct sampler **out);

enum report_format report_format(const struct report *r);
/* "now" for the window and the views: a time inside the window that keeps
 * every sample live (the profile's duration when known, clamped). */
uint64_t report_now_ns(const struct report *r, const struct window *w);
/* Seconds per sample when the file says (pprof period; speedscope: the
 * period stacktop writes, or the lightest weight of a file in times), else 0. */
double report_period_s(const struct report *r);
/* Seconds the profile covers when the file says (pprof duration), else 0. */
double report_duration_s(const struct report *r);
/* "cpu" or "wall" when the file says, else NULL. */
const char *report_mode(const struct report *r);
/* Samples loaded (sum of the stored stacks' weights). */
uint64_t report_samples(const struct report *r);
/* The stored stacks one by one (for `stacktop diff`), frames outermost
 * first; second is -1 where the file does not say (pprof label "second",
 * folded "# stacktop: {second=N}" blocks, as record writes them). */
struct report_stack {
	const uint32_t *ids;
	uint32_t n, weight;
	int tid;
	int32_t second;
};
size_t report_nstacks(const struct report *r);
void report_stack(const struct report *r, size_t i, struct report_stack *out);
/* Every stack has its second. */
bool report_timed(const struct report *r);
/* The run's summary when the file carries stacktop's, else NULL. */
const struct export_summary *report_summary(const struct report *r);
/* Threads the samples came from (REPORT_TID_ANY counts as one). */
size_t report_nthreads(const struct report *r);
/* Thread name for tid, or NULL; ctx is the struct report (the signature of
 * export_opts.thread_name, so a report can be exported again). */
const char *report_thread_name(void *ctx, int tid);

#endif
