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
 * run's summary) first, the run's per-second CPU "# stacktop:
 * {cpu_1s=...}" and where it sits "# stacktop: {cpu_1s_at=K}" (model/
 * summary), and with per_second "# stacktop: {second=N}" before each
 * second's block.
 *
 * Read (folded_load): the same, and foreign files: '#' comments and blank
 * lines skipped, decimal counts rounded, a line at most 1 MiB. When every
 * line's root has the "name-TID" shape it becomes the thread (name and
 * tid) instead of a frame. A load fails (-EINVAL/-ENOMEM/-EFBIG, one
 * sentence) on a line without a count, a count but no frames, a NUL byte,
 * a line over 1 MiB, no stacks, too many frames.
 *
 * Both go through folded_format (format.h); it sniffs nothing: report
 * reads as folded any file no other format claimed.
 */
#ifndef STACKTOP_FOLDED_H
#define STACKTOP_FOLDED_H

#include <stdbool.h>
#include <stddef.h>

#include "stacktop/formats/format.h"

extern const struct format_ops folded_format;

/* "name-TID" → tid (and the name's length, n bytes at s); false when not
 * that shape (the speedscope reader's profile names too). */
bool folded_thread_root(const char *s, size_t n, int *tid, size_t *namelen);

#endif
