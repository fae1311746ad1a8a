/*
 * window — the rolling-window aggregator.
 *
 * Stacks of frame ids (from the frames table, which the symbolizer stage
 * owns) are interned into a call trie whose nodes are (parent node, frame);
 * node 0 is the root, and a stack is the path from the root (outermost
 * caller) down to its leaf node. The window takes a reference on a frame
 * for each trie node that uses it (frames_ref), and reads the frames for
 * its aggregation keys and wait kinds.
 *
 * The trie holds what the window counts, not everything ever seen: a node
 * lives while some (node, tid) count of the running sum ends at it or it
 * has a live child. When counts fall to zero (a bucket expires, a reset)
 * the nodes no longer live are freed, with their frame references, and
 * their ids are handed to new nodes later. So node ids (and the frame ids
 * they name) are good for one query: keep none across window_add,
 * window_advance or window_reset.
 *
 * Time is a ring of buckets, bucket_ns wide, covering `seconds`. Each bucket
 * counts samples per (leaf node, tid); the window also keeps the running sum
 * over all live buckets, so adding a sample and expiring a bucket cost
 * O(entries), never a rescan. Queries (top-N, per-thread totals, icicle) read
 * the running sums.
 *
 * The window owns everything it allocates; the frames table is borrowed and
 * must outlive it (window_free drops the window's references).
 */
#ifndef STACKTOP_WINDOW_H
#define STACKTOP_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/sample/sample.h"

#define WINDOW_ROOT 0u

struct window_node {
	uint32_t parent; /* WINDOW_ROOT for outermost frames; root's parent is itself */
	uint32_t frame;
	uint32_t depth; /* 1 for outermost frames, 0 for the root */
};

/* One (leaf node, tid) count in the window. */
struct window_count {
	uint32_t node;
	int tid;
	uint64_t count;
};

struct window;

/* fr is borrowed: frame ids passed to window_add are its ids. */
int window_new(unsigned seconds, uint64_t bucket_ns, struct frames *fr, struct window **out);
void window_free(struct window *w);

/* The frames table the window's stacks name (to reach a node's frame:
 * frames_get(window_frames(w), window_node(w, id)->frame)). The _mut
 * variant is for looking lines up (frames_line). */
const struct frames *window_frames(const struct window *w);
struct frames *window_frames_mut(struct window *w);

/* Look file:line up (frames_line) for every frame on a stack live in the
 * window for tid (0: all threads): what WINDOW_KEY_LINE aggregates by.
 * Today the top view calls it before it aggregates by line; it is meant
 * to move to the tick. 0 or -ENOMEM. */
int window_resolve_lines(struct window *w, int tid);

/* Add a sample whose frames run from the outermost caller (frames[0]) to the
 * leaf (frames[n-1]). Expires buckets older than the window first. */
int window_add(struct window *w, uint64_t time_ns, int tid, const uint32_t *frames, size_t n,
	       uint32_t weight);
/* Expire buckets that have left the window at time now_ns. */
void window_advance(struct window *w, uint64_t now_ns);
/* Drop all samples, and every trie node but the root with its frame
 * reference (frames nobody else holds are reclaimed). */
void window_reset(struct window *w);

/* A trie node, or NULL for an id that is not live. The pointer is valid
 * until the next window_add (the array grows by realloc); the id until the
 * next add, advance or reset (a freed node's id is reused). */
const struct window_node *window_node(const struct window *w, uint32_t id);
/* One past the highest node id handed out (for id-indexed arrays). */
size_t window_nnodes(const struct window *w);
/* Trie nodes live now, the root not counted (for tests and the memory
 * bench; frames_live counts the frames they hold). */
size_t window_live_nodes(const struct window *w);

/* The live (node, tid) counts; valid until the next add/advance/reset. */
const struct window_count *window_counts(const struct window *w, size_t *n);
uint64_t window_total(const struct window *w); /* samples in the window */
/* The ring's buckets, for per-second questions (export's "second" labels,
 * the live diff's test): slots 0 .. window_nbuckets-1 in ring order. A
 * live slot's counts (valid as window_counts') and its bucket number
 * (time_ns / window_bucket_ns) in *num; NULL with *n = 0 when not live. */
size_t window_nbuckets(const struct window *w);
uint64_t window_bucket_ns(const struct window *w);
const struct window_count *window_bucket_counts(const struct window *w, size_t slot, uint64_t *num,
						size_t *n);
uint64_t window_thread_total(const struct window *w, int tid);
unsigned window_seconds(const struct window *w);
/* Seconds of data actually covered (< seconds during the first minute). */
double window_span_s(const struct window *w, uint64_t now_ns);

/* ---- top-N aggregation ---- */

enum window_key {
	WINDOW_KEY_FUNCTION, /* module + function */
	WINDOW_KEY_LINE,     /* module + function + file:line */
};

struct window_top_row {
	uint32_t frame; /* a representative frame id: its sym names the row */
	int pid;	/* by_process: the process whose stacks it counts; else 0 */
	uint64_t self;	/* samples whose leaf is this function/line */
	uint64_t total; /* samples with this function/line anywhere on the stack (once per stack) */
	/* total split by the wait kind of each stack's pseudo leaf
	 * (SAMPLE_WAIT_NONE: no wait frame, i.e. on CPU or runnable). */
	uint64_t wait[SAMPLE_WAIT_COUNT];
};

struct window_top_query {
	enum window_key key;
	int tid;	  /* 0: all threads */
	bool hide_kernel; /* kernel frames skipped; their self goes to the user leaf */
	/* Wait pseudo frames become rows of their own; by default they are
	 * skipped and their self goes to the real leaf below them. */
	bool include_wait_rows;
	bool hide_idle; /* leave out threads window_thread_idle calls idle */
	/* Whole-machine mode (stacks start with a process root frame,
	 * frames_process; never a row itself): pid keeps the stacks of that
	 * process only (0: all); by_process makes a row per (process,
	 * function), its pid in the row. */
	int pid;
	bool by_process;
	/* Only these seconds (bucket numbers, time_ns / bucket_ns, sorted
	 * ascending; nseconds 0: the whole window): what a process ran in
	 * the seconds it sat at its floor. */
	const uint64_t *seconds;
	size_t nseconds;
};

/* Aggregate the window into rows (unsorted). *rows is malloc'd (also when
 * *n is 0), caller frees. Keys: (kernel, module, function) by string
 * content, so the same function in several pids is one row; plus (file,
 * line) for WINDOW_KEY_LINE (as far as looked up: see
 * window_resolve_lines). A frame with a sym but no function is keyed
 * by (module, offset); a frame without a sym by (pid, pc). With
 * hide_kernel a kernel-only stack still counts in *total but gives no
 * row its self. */
int window_top(struct window *w, const struct window_top_query *q, struct window_top_row **rows,
	       size_t *n, uint64_t *total);

/* Samples on the CPU in the window that are garbage collection: their
 * stack holds a collector's function (funckind GC: Go's mark workers and
 * assists, HotSpot's, CPython's, V8's), or their thread is one of gc_tids
 * (sorted; a runtime's GC threads by name, funckind_gc_thread). *running
 * is all samples on the CPU (wall mode's waits left out). */
uint64_t window_gc_counts(const struct window *w, const int *gc_tids, size_t ntids,
			  uint64_t *running);

/* ---- wall mode ---- */

/* Samples of tid (0: all threads) in the window by the wait kind of their
 * pseudo leaf; counts[SAMPLE_WAIT_NONE] = samples without one (running).
 * Returns the sum. The view layer words it (view_wait_split). */
uint64_t window_wait_counts(const struct window *w, int tid, uint64_t counts[SAMPLE_WAIT_COUNT]);
/* Idle: at least 95% of tid's samples in the window wait for work
 * (SAMPLE_WAIT_IDLE: a condition variable, a semaphore, a join, an event
 * loop's wait); a worker that takes a job now and then stays idle. A thread
 * that runs, waits for a CPU or a lock, sleeps, is blocked in I/O (a read
 * of a pipe may be what the program waits for) or is in D state for more
 * than 5% of them is not idle; neither is one with no samples. */
bool window_thread_idle(const struct window *w, int tid);

#endif
