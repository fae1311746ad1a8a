/*
 * folded — FlameGraph's folded stacks: "root;caller;leaf COUNT", one line
 * per distinct stack of function names (the input of flamegraph.pl and
 * most flame-graph tools).
 *
 * Written (folded_render): lines sorted; kernel frames carry FlameGraph's
 * "_[k]" suffix, JIT frames "_[j]", inlined functions "_[i]"
 * (stackcollapse-perf.pl --inline); with per_thread each stack starts with
 * a "name-TID" frame. stacktop's own facts ride in comment lines FlameGraph
 * skips (they do not end in a number): "# stacktop: {wall_s=...}" (the
 * run's summary) first, and with per_second "# stacktop: {second=N}"
 * before each second's block.
 *
 * Read (folded_load): the same, and foreign files: '#' comments and blank
 * lines skipped, decimal counts rounded, a line at most 1 MiB. When every
 * line's root has the "name-TID" shape it becomes the thread (name and
 * tid) instead of a frame.
 *
 * Neither keeps anything: render appends to the caller's buffer, load adds
 * to the caller's stackset.
 */
#ifndef STACKTOP_FOLDED_H
#define STACKTOP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>

struct export_opts;
struct sbuf;
struct selection;
struct stackset;
struct window;

/* The selected stacks of w as folded text appended to out. 0 or -ENOMEM. */
int folded_render(struct window *w, const struct export_opts *o, struct selection *s,
		  struct sbuf *out);

/* data[0..len) as folded stacks into ss (name for messages). 0, or
 * -EINVAL/-ENOMEM/-EFBIG with one sentence in err (a line without a count,
 * a count but no frames, a NUL byte, a line over 1 MiB, no stacks, too many
 * frames). */
int folded_load(struct stackset *ss, const char *data, size_t len, const char *name, char *err,
		size_t errsz);

/* "name-TID" → tid (and the name's length, n bytes at s); false when not
 * that shape (the speedscope reader's profile names too). */
bool folded_thread_root(const char *s, size_t n, int *tid, size_t *namelen);

#endif
