/*
 * stackset — a profile loaded from a file: weighted stacks of frame ids,
 * the threads they came from, and what the file said about the run (mode,
 * period, duration, the run's summary). The readers (folded.c, pprof.c,
 * speedscope.c) build it; report replays it as a sampler, `stacktop diff`
 * (diffload.c) compares its stacks' leaves.
 *
 * Frames: one named frame of the frames table given per distinct (kernel?,
 * module, function, file, line, origin) (frames_named_at: the table copies
 * the strings), so the top view's keys and the icicle's merge by name work
 * as on a live window. A wall-mode wait leaf ("[sleep]", "[lock]", ... with
 * module "[wait]" or none) becomes frames_wait's pseudo frame again, so
 * the on/off-CPU split works on a loaded profile too. The frames table must
 * outlive the set's ids.
 *
 * Weights are 32-bit: a reader finds its largest count first and passes
 * stackset_scale(max) with every stack, so all weights are divided by one
 * factor and the shares stay the same. Stacks without a thread count under
 * STACKSET_TID_ANY, whose thread name is "all".
 *
 * Memory: frame ids of all stacks are capped at max_ids (stackset_add
 * says -EFBIG past it): stackset_ids_limit(size of the profile data) = 8
 * per byte plus 1 Mi (4 bytes each), never over 2^25, so a small hostile
 * file cannot take the machine's memory.
 *
 * Contract: stackset_new, then a reader's calls (frames, threads, stacks,
 * the setters), then the accessors; stackset_free frees it and everything
 * it pooled (names handed out by stackset_strings too).
 */
#ifndef STACKTOP_STACKSET_H
#define STACKTOP_STACKSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame_origin;
struct frames;
struct strpool;
struct summary;
struct stackset;

#define STACKSET_TID_ANY 1

/* The message of -EFBIG from stackset_add: name, then stackset_max_ids. */
#define STACKSET_TOO_MANY_FRAMES                                                                   \
	"%s: its stacks hold more frames than its size allows (%zu); not loading it."

enum stackset_format { STACKSET_FOLDED, STACKSET_PPROF, STACKSET_SPEEDSCOPE };

/* 0 with *out, or -ENOMEM. fr is borrowed. */
int stackset_new(struct frames *fr, size_t max_ids, struct stackset **out);
void stackset_free(struct stackset *ss);
/* The cap on frame ids for a profile of len bytes (see the head). */
size_t stackset_ids_limit(size_t len);

/* ---- building (the readers) ---- */

/* A frame as a reader found it; strings pooled (stackset_strings) or NULL. */
struct stackset_frame {
	const char *func, *module, *file;
	int line;
	bool kernel, jit, inlined;
	const struct frame_origin *origin; /* where its code is (pprof), or NULL */
};

/* A growable array of frame ids, a reader's stack under construction
 * (zero-initialise; free(v) when done). */
struct stackset_ids {
	uint32_t *v;
	size_t n, cap;
};
int stackset_ids_push(struct stackset_ids *a, uint32_t id);

/* The set's string pool: names live as long as the set. */
struct strpool *stackset_strings(struct stackset *ss);
/* The named frame for f: its id, or -ENOMEM. */
int64_t stackset_frame(struct stackset *ss, const struct stackset_frame *f);
/* Thread tid is in the profile; name (pooled or NULL) when first known. */
int stackset_thread(struct stackset *ss, int tid, const char *name);
/* The divisor that brings max into 32 bits (1 when it fits). */
uint64_t stackset_scale(uint64_t max);
/* Store frames[0..n) (outermost first) with count samples divided by
 * scale (at least 1 when count is not 0); second -1 when not said. An
 * empty stack or a zero count stores nothing. frames is modified (a wait
 * leaf). 0, -ENOMEM, or -EFBIG past max_ids. */
int stackset_add(struct stackset *ss, int tid, int32_t second, uint32_t *frames, size_t n,
		 uint64_t count, uint64_t scale);
size_t stackset_max_ids(const struct stackset *ss);
/* A reader's failure rc (0: nothing) as one sentence in err: -EINVAL is
 * "name: invalid: bad." (bad NULL: "bad data"), -EFBIG
 * STACKSET_TOO_MANY_FRAMES, any other strerror. Returns rc. */
int stackset_load_errf(const struct stackset *ss, int rc, const char *name, const char *invalid,
		       const char *bad, char *err, size_t errsz);
void stackset_set_max_ids(struct stackset *ss, size_t max_ids);
void stackset_set_format(struct stackset *ss, enum stackset_format f);
/* "cpu" or "wall" (a static string). */
void stackset_set_mode(struct stackset *ss, const char *mode);
void stackset_set_period_s(struct stackset *ss, double period_s);
void stackset_set_duration_s(struct stackset *ss, double duration_s);
void stackset_set_summary(struct stackset *ss, const struct summary *s);
/* The run's per-second CPU (summary_cpu_parse's), copied; 0 or -ENOMEM. */
int stackset_set_cpu(struct stackset *ss, const double *v, size_t n);
/* The same from a file's comment "cpu_1s=..." (len bytes at s), when it
 * is that, or where it sits, "cpu_1s_at=K"; a bad one is ignored like any
 * other comment (folded, pprof). */
void stackset_parse_cpu(struct stackset *ss, const char *s, size_t len);
/* It, oldest first, and its count in *n (NULL, 0: the file has none). */
const double *stackset_cpu(const struct stackset *ss, size_t *n);
/* The stacks' second whose CPU is its first value (summary's cpu_1s_at);
 * false when the file does not say. */
bool stackset_cpu_at(const struct stackset *ss, int64_t *at);

/* ---- reading ---- */

enum stackset_format stackset_format(const struct stackset *ss);
/* Seconds per sample when the file says (pprof period; speedscope: the
 * period stacktop writes, or the lightest weight of a file in times), else 0. */
double stackset_period_s(const struct stackset *ss);
/* Seconds the profile covers when the file says (pprof duration), else 0. */
double stackset_duration_s(const struct stackset *ss);
/* "cpu" or "wall" when the file says (or a wait leaf shows), else NULL. */
const char *stackset_mode(const struct stackset *ss);
/* Samples loaded (sum of the stored stacks' weights). */
uint64_t stackset_samples(const struct stackset *ss);
/* The stored stacks one by one, frames outermost first; second is -1 where
 * the file does not say (pprof label "second", folded "# stacktop:
 * {second=N}" blocks, as record writes them). */
struct stackset_stack {
	const uint32_t *ids;
	uint32_t n, weight;
	int tid;
	int32_t second;
};
size_t stackset_nstacks(const struct stackset *ss);
void stackset_stack(const struct stackset *ss, size_t i, struct stackset_stack *out);
/* Every stack has its second. */
bool stackset_timed(const struct stackset *ss);
/* The run's summary when the file carries stacktop's, else NULL. */
const struct summary *stackset_summary(const struct stackset *ss);
/* Threads the samples came from (STACKSET_TID_ANY counts as one). */
size_t stackset_nthreads(const struct stackset *ss);
bool stackset_has_thread(const struct stackset *ss, int tid);
/* Thread name for tid, or NULL; ctx is the struct stackset (the signature
 * of export_opts.thread_name, so a loaded profile can be exported again). */
const char *stackset_thread_name(void *ctx, int tid);

#endif
