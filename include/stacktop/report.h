/*
 * report — read a saved profile (folded stacks, or pprof: gzip-compressed or
 * plain protobuf) into a window, for `stacktop report FILE`.
 *
 * Frames are synthetic: interned with pid 0 and pc = a unique id per
 * distinct (kernel?, module, function, file, line), their sym strings owned
 * by struct report. So: report_free AFTER window_free.
 *
 * Every sample is added at time 0 (REPORT_TIME_NS). The caller creates a
 * fresh window (window_new(seconds, 1000000000, ...), any seconds >= 1) and
 * must never advance it with the clock: pass report_now_ns(r) wherever a
 * view or window call wants "now" (window_span_s, renders), and nothing
 * expires. Samples without a thread (plain folded stacks, foreign pprof)
 * count under tid REPORT_TID_ANY, whose report_thread_name is "all".
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

struct window;
struct report;

#define REPORT_TIME_NS 0ull
#define REPORT_TID_ANY 1

enum report_format { REPORT_FOLDED, REPORT_PPROF };

/* Load path into w (normally empty). 0, or -errno with one sentence in err
 * (empty file, truncated gzip, corrupt protobuf, a folded line without a
 * count, a line over 1 MiB, no samples). On error *out is NULL and w may
 * hold part of the samples: free it. */
int report_load(const char *path, struct window *w, struct report **out, char *err, size_t errsz);
/* The same from memory; name is used in messages. (Fuzzing, tests.) */
int report_load_mem(const void *data, size_t len, const char *name, struct window *w,
		    struct report **out, char *err, size_t errsz);
void report_free(struct report *r);

enum report_format report_format(const struct report *r);
/* "now" for the window and the views: a time inside the window that keeps
 * every sample live (the profile's duration when known, clamped). */
uint64_t report_now_ns(const struct report *r, const struct window *w);
/* Seconds per sample when the file says (pprof period), else 0. */
double report_period_s(const struct report *r);
/* Seconds the profile covers when the file says (pprof duration), else 0. */
double report_duration_s(const struct report *r);
/* "cpu" or "wall" when the file says, else NULL. */
const char *report_mode(const struct report *r);
/* Samples loaded (sum of weights added to the window). */
uint64_t report_samples(const struct report *r);
/* Threads the samples came from (REPORT_TID_ANY counts as one). */
size_t report_nthreads(const struct report *r);
/* Thread name for tid, or NULL; ctx is the struct report (the signature of
 * export_opts.thread_name, so a report can be exported again). */
const char *report_thread_name(void *ctx, int tid);

#endif
