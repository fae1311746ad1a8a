/*
 * ingest — the per-sample stage: a struct sample from any sampler becomes a
 * stack of frame ids counted in the window.
 *
 *   sample ─► (maps of its process, reloaded when stale) ─► unwind
 *          ─► frames_user_chain / frames_kernel / frames_wait ─► window_add
 *
 * (a user pc in inlined code is one frame per inlined function, then the
 * frame of the function it lies in: frames_user_chain)
 *
 * It owns one entry per target process: its address space (space) and its
 * unwinder. Maps are reloaded when a sampler says they changed (exec, new
 * code mapped) or when an unwound pc falls outside every known mapping, at
 * most every 100 ms. A sample that already carries frame ids (a saved
 * profile) goes straight to the window.
 *
 * CPython processes (runtime/python.h, looked for each time a process's
 * code changes): each native evaluation-loop frame of a sample is replaced
 * by the Python frames it runs, named by frames_script; when the counts
 * of the two do not match, the Python frames go on top of the native
 * stack and the sample is counted (python_unmatched). The Python frames
 * are read from the process when the sample is named (perf's samples on
 * the next collect tick, 0–50 ms later): what the thread runs then, so a
 * function's share is right over many samples, not each sample's frames;
 * a sample named more than PY_LATE_NS (250 ms) after it was taken keeps
 * its native frames only (counted as unmatched).
 *
 * ingest_sink hands a sampler the callbacks to deliver into; ingest_stack
 * is the same work without the window (dump uses it). Counters (unwinds
 * truncated or failed, samples of unknown pids, execs) are for the header.
 *
 * Following child processes (ingest_follow, --subprocesses): a sample of a
 * pid not added is from a descendant the sampler saw before procs did
 * (inherited events): the process is added there and then, its maps read
 * at once (adopted). Without following such a sample is dropped and
 * counted. The table grows up to INGEST_PROCS_MAX processes; a process
 * past it is dropped and counted the same way.
 *
 * A process that ended gives its space and unwinder back: once
 * ingest_process_exited said so and an ingest_refresh has passed since
 * (its last samples are drained from the rings by then), or, for one
 * nobody reports (adopted, never seen by procs), when it has had no
 * sample for INGEST_IDLE_REFRESHES refreshes and /proc no longer has it.
 * Frames already named keep what they need (module references): the
 * window's stacks outlive the process.
 *
 * Contract: ingest_new(frames, window or NULL) → ingest_add_process* →
 * (samples, ingest_process_exited, ingest_refresh)* → ingest_free. frames
 * and window are borrowed.
 */
#ifndef STACKTOP_INGEST_H
#define STACKTOP_INGEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/sample/sample.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/unwind/unwind.h"

/* Processes tracked at once (targets and followed descendants). */
#define INGEST_PROCS_MAX 4096
/* Refreshes without a sample before an unreported process is checked. */
#define INGEST_IDLE_REFRESHES 3

/* User plus kernel frames and one wait frame. */
#define INGEST_MAX_FRAMES (UNWIND_MAX_FRAMES * 2 + 1)

struct ingest_stats {
	uint64_t samples;	    /* delivered to ingest */
	uint64_t weight;	    /* their weights: periods of the configured rate */
	uint64_t unknown_pid;	    /* of no process added */
	uint64_t truncated, failed; /* unwinds */
	/* unwinds the rule cache stopped; of those, how many libunwind took to
	 * the outermost frame (without it, truncated + finished would be) */
	uint64_t cache_stopped, finished;
	uint64_t execs;	   /* exec events seen */
	uint64_t adopted;  /* processes added from their first sample */
	uint64_t released; /* processes whose space was given back */
	int nprocs;	   /* processes tracked now */
	/* CPython (runtime/python.h): samples with Python frames; of those,
	 * how many could not be matched with the native stack (its frames
	 * put on top), and how many were cut short (a torn read, too deep) */
	uint64_t python, python_unmatched, python_torn;
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
/* Python frames however late the sample is named (dump: its threads
 * stay where they were sampled, or nearly) rather than after PY_LATE_NS
 * only. */
void ingest_python_any_age(struct ingest *in, bool on);
/* Samples of pids not added: adopt the process (true) or drop them. */
void ingest_follow(struct ingest *in, bool on);
/* The whole machine (with ingest_follow): every stack starts with the
 * root frame of its process (frames_process, named from /proc/PID/comm
 * when the process is added, renamed by an exec), so views, formats and
 * the icicle tell processes apart; samples of pid 0 (the idle loop) are
 * dropped without counting. Set before the first sample. */
void ingest_process_roots(struct ingest *in, bool on);
/* The processes that had samples since the last call (each once), up to
 * max into out; returns how many (the whole machine's procfs budget reads
 * those first). */
size_t ingest_take_sampled(struct ingest *in, pid_t *out, size_t max);
/* pid ended: its space and unwinder go after the next ingest_refresh but
 * one. Unknown pids are ignored. */
void ingest_process_exited(struct ingest *in, pid_t pid);
/* Once a refresh: give back the processes that ended (see above). */
void ingest_refresh(struct ingest *in);
/* Whether pid is tracked now (tests, the header). */
bool ingest_has_process(const struct ingest *in, pid_t pid);
/* Whether a process tracked now runs CPython (known from its adding:
 * its stacks are read when its samples are named, so promptly is best). */
bool ingest_any_python(const struct ingest *in);

/* The frames of one sample, outermost caller first (frames[0]) to the leaf
 * (and its wait frame, if any). 0, or -ESRCH for a pid not added. */
int ingest_stack(struct ingest *in, const struct sample *s, uint32_t *frames, int max, int *n);
/* ingest_stack, then count it in the window. */
void ingest_sample(struct ingest *in, const struct sample *s);
/* pid's mappings changed (exec, mmap): reload before its next unwind. */
void ingest_maps_changed(struct ingest *in, pid_t pid);

/* The CPython processes' state now (runtime/python.h): the threads that
 * hold a GIL (at most max into tids; returns how many) and whether a
 * collection runs in any (*gc). A few reads of each process's memory:
 * for a refresh, not per sample. */
int ingest_python_state(struct ingest *in, int *tids, int max, bool *gc);

/* The callbacks a sampler delivers into (ctx = in). */
void ingest_sink(struct ingest *in, struct sampler_sink *out);
const struct ingest_stats *ingest_get_stats(const struct ingest *in);

#endif
