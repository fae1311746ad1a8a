/*
 * ingest — the per-sample stage: a struct sample from any sampler becomes a
 * stack of frame ids counted in the window.
 *
 *   sample ─► (maps of its process, reloaded when stale) ─► unwind
 *          ─► frames_user / frames_kernel / frames_wait ─► window_add
 *
 * It owns one entry per target process: its address space (space) and its
 * unwinder. Maps are reloaded when a sampler says they changed (exec, new
 * code mapped) or when an unwound pc falls outside every known mapping, at
 * most every 100 ms. A sample that already carries frame ids (a saved
 * profile) goes straight to the window.
 *
 * ingest_sink hands a sampler the callbacks to deliver into; ingest_stack
 * is the same work without the window (dump uses it). Counters (unwinds
 * truncated or failed, samples of unknown pids, execs) are for the header.
 *
 * Contract: ingest_new(frames, window or NULL) → ingest_add_process* →
 * (samples)* → ingest_free. frames and window are borrowed.
 */
#ifndef STACKTOP_INGEST_H
#define STACKTOP_INGEST_H

#include <stdint.h>
#include <sys/types.h>

#include "stacktop/sample.h"
#include "stacktop/sampler.h"
#include "stacktop/unwind.h"

/* User plus kernel frames and one wait frame. */
#define INGEST_MAX_FRAMES (UNWIND_MAX_FRAMES * 2 + 1)

struct ingest_stats {
	uint64_t samples;	    /* delivered to ingest */
	uint64_t unknown_pid;	    /* of no process added */
	uint64_t truncated, failed; /* unwinds */
	uint64_t execs;		    /* exec events seen */
};

struct frames;
struct window;
struct ingest;

int ingest_new(struct frames *fr, struct window *w, struct ingest **out);
void ingest_free(struct ingest *in);

/* Track process pid and load its maps now. 0, -EEXIST, -ENOSPC (too many
 * processes), -ENOMEM; a process whose maps cannot be read yet is still
 * added (they are read again on its first sample). */
int ingest_add_process(struct ingest *in, pid_t pid);

/* The frames of one sample, outermost caller first (frames[0]) to the leaf
 * (and its wait frame, if any). 0, or -ESRCH for a pid not added. */
int ingest_stack(struct ingest *in, const struct sample *s, uint32_t *frames, int max, int *n);
/* ingest_stack, then count it in the window. */
void ingest_sample(struct ingest *in, const struct sample *s);
/* pid's mappings changed (exec, mmap): reload before its next unwind. */
void ingest_maps_changed(struct ingest *in, pid_t pid);

/* The callbacks a sampler delivers into (ctx = in). */
void ingest_sink(struct ingest *in, struct sampler_sink *out);
const struct ingest_stats *ingest_get_stats(const struct ingest *in);

#endif
