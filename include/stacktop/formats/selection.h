/*
 * selection — the stacks every profile writer sees: the window's counts
 * after export_opts' thread filter, kernel frames dropped on request and
 * the icicle zoom prefix, so the three formats (folded.c, pprof.c,
 * speedscope.c) write the same samples. A stack left with no frame
 * (kernel-only with hide_kernel) is not selected: no format can hold an
 * empty stack.
 *
 * Also the names the writers share: a frame named as the icicle names it
 * (function, "module+0xOFF", "0xPC", "name (inline)"), cleaned to valid
 * UTF-8 without control characters ('?' instead; folded names also lose
 * ';', the frame separator).
 *
 * Contract: selection_build fills a caller's struct selection (the caller
 * frees it with selection_free, also after a failed build); the window is
 * only read and must not change while the selection is in use (labels are
 * cached per window frame id). Pointers into the window are not kept.
 */
#ifndef STACKTOP_SELECTION_H
#define STACKTOP_SELECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct export_opts;
struct window;

struct selection_stack {
	int tid;
	int64_t second; /* seconds since the first bucket (per_second), else -1 */
	uint64_t count;
	size_t off, n; /* frame ids root first: selection.frames[off .. off+n) */
};

struct selection {
	struct selection_stack *st;
	size_t nst, capst;
	uint32_t *frames;
	size_t nframes, capframes;
	char **label; /* per window frame id: clean label, filled lazily */
	size_t nlabel;
	uint64_t total;
	int64_t first_s; /* per_second: the first bucket's start, in seconds; else -1 */
};

/* Select w's stacks as o says: summed over the window, or with
 * o->per_second one stack per (stack, thread, bucket), oldest bucket
 * first. 0 or -ENOMEM. */
int selection_build(struct selection *s, struct window *w, const struct export_opts *o);
void selection_free(struct selection *s);

/* The second (as the stacks count them, from first_s) whose CPU the
 * first value of o->cpu a writer keeps is (summary's cpu_1s_at): false
 * without per_second stacks or o->cpu_t. */
bool selection_cpu_at(const struct selection *s, const struct export_opts *o, int64_t *at);

/* The cleaned label of window frame id (folded rules: no ';'), cached in
 * s; "?" when it cannot be made. */
const char *selection_label(struct selection *s, struct window *w, uint32_t id);

/* in as valid UTF-8 without control characters (folded: nor ';'), each bad
 * byte or character '?'. Malloc'd; NULL when out of memory. */
char *selection_clean(const char *in, bool folded);

/* "name-TID" for a per-thread root (o->thread_name's name, or "thread"),
 * cleaned for the format. Malloc'd; NULL when out of memory. */
char *selection_thread_root(const struct export_opts *o, int tid, bool folded);

#endif
