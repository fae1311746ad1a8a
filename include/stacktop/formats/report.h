/*
 * report — a saved profile (folded stacks, pprof: gzip-compressed or
 * plain protobuf, or speedscope JSON) as a source of samples, for
 * `stacktop report FILE`.
 *
 * report_load reads the file, sniffs its format and has the format's
 * reader (folded.h, pprof.h, speedscope.h) fill a stackset: frame ids of
 * the frames table given, a tid, a weight and a second per stack, and what
 * the file said about the run (stackset.h). report_sampler_new makes it a
 * struct sampler (mode NULL) whose first collect delivers every stored
 * stack once, as samples with frame_ids set and time REPORT_TIME_NS; later
 * collects deliver nothing. The frames table must outlive the stackset's
 * ids (frames_free after the window and the stackset are done with them).
 *
 * Every sample is at time 0 (REPORT_TIME_NS). The caller creates a fresh
 * window (window_new(seconds, 1000000000, fr, ...), any seconds >= 1) and
 * must never advance it with the clock: pass report_now_ns(ss, w) wherever
 * a view or window call wants "now" (window_span_s, renders), and nothing
 * expires. Samples without a thread (plain folded stacks, foreign pprof)
 * count under tid STACKSET_TID_ANY, whose thread name is "all".
 *
 * Memory caps (a hostile or amplifying file gets one sentence, -EFBIG,
 * never the machine's memory), all proportional to the input's size:
 *  - the file: at most 1 GiB;
 *  - gzip: inflates to at most 64 times the compressed size plus 1 MiB,
 *    and never over 512 MiB;
 *  - pprof: protobuf-c may allocate at most pprof_unpack_limit(size of
 *    the protobuf) = 32 times its size plus 16 MiB (pprof.h);
 *  - frame ids of all stacks: stackset_ids_limit(size of the profile
 *    data) = 8 per byte plus 1 Mi (4 bytes each), never over 2^25;
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

#include <stddef.h>
#include <stdint.h>

struct frames;
struct sampler;
struct stackset;
struct window;

#define REPORT_TIME_NS 0ull

/* Load path, interning its frames in fr. 0, or -errno with one sentence
 * in err (empty file, truncated gzip, corrupt protobuf, a folded line
 * without a count, a line over 1 MiB, too many frames, no samples). On
 * error *out is NULL (fr may hold some of the frames). The caller frees
 * *out with stackset_free. */
int report_load(const char *path, struct frames *fr, struct stackset **out, char *err,
		size_t errsz);
/* The same from memory; name is used in messages. (Fuzzing, tests.) */
int report_load_mem(const void *data, size_t len, const char *name, struct frames *fr,
		    struct stackset **out, char *err, size_t errsz);

/* The stackset as a sampler (see the head of this file). ss is borrowed
 * and must outlive it (free the sampler first). 0 or -ENOMEM. */
int report_sampler_new(struct stackset *ss, struct sampler **out);

/* "now" for the window and the views: a time inside the window that keeps
 * every sample live (the profile's duration when known, clamped). */
uint64_t report_now_ns(const struct stackset *ss, const struct window *w);

#endif
