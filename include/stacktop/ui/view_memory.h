/*
 * view_memory — the memory view (key 4, --view memory): which mappings
 * grow and which code paths hold the growth.
 *
 *   header (view_header_render)
 *   MEMORY +2.5 MiB/min anon, +10 MiB/min file · 57 anon maps · smaps every 1s (3 ms)
 *   KIND   RSS      +WINDOW   PER MIN  MAPS  MAPPING
 *   anon   62 MiB   +24 MiB   +150 MiB   60  anonymous
 *   file   40 MiB   +40 MiB   +600 MiB    1  /tmp/grow.dat
 *   HOLDS    +WINDOW  PER MIN  FAULTS  CODE PATH (mmap/brk traced 42s, faults 1 in 64)
 *   24 MiB   +24 MiB  +150 MiB   1.2k  cache_put (memgrow.c:41) < main
 *   0 B      0 B      0 B       40.1k  handle_request (memgrow.c:52) < main
 *   footer
 *
 * The top table is /proc/PID/smaps folded into rows (memmap.h), sorted by
 * growth over the window; the split line says the anonymous (on-heap)
 * growth apart from the file-backed and shared growth. The bottom table is
 * memhold's ranking: stacks by bytes still held that they mapped in the
 * window, with their rate, and sampled page faults (who touches memory:
 * churn is seen there without being blamed for holding). A code path is
 * named by its innermost frame outside libc and the dynamic loader (the
 * allocator's own frames say nothing), then its caller.
 *
 * Update and render like the other views: view_memory_update collects,
 * sorts and names the rows (frames_line for file:line, on the tick);
 * render draws from the const state. The state owns its rows.
 */
#ifndef STACKTOP_VIEW_MEMORY_H
#define STACKTOP_VIEW_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/ui/grid.h"
#include "stacktop/memory/memtrace.h"
#include "stacktop/ui/view.h"

struct frames;
struct memhold;
struct memmap;
struct metrics;

/* What update reads; owned by the session. */
struct view_memory_input {
	const struct memmap *mm;     /* NULL: not started */
	struct memhold *hold;	     /* NULL: no attribution (see trace_err) */
	struct memtrace_stats trace; /* the tracer's counters (period, lost, ...) */
	struct frames *fr;	     /* names of the holders' frames */
	const char *trace_err;	     /* why there is no attribution, or "" */
	unsigned window_s;
	uint64_t now_ns;
	uint64_t since_ns; /* when tracing started */
	/* the series (a JVM's heap beside RSS: rt_heap), NULL: none */
	const struct metrics *metrics;
};

struct view_memory_map {
	int r; /* row in memmap */
	char kind[8];
	char name[256]; /* raw */
	uint32_t nmaps;
	uint64_t rss_kb;
	int64_t delta_kb;
	double per_min_kb;
};

struct view_memory_holder {
	uint64_t held, held_window, faults;
	double per_min;	 /* bytes a minute, from held_window */
	char label[256]; /* raw: "cache_put (memgrow.c:41) < main" */
	char func[128];	 /* raw: the holder's function, "cache_put" */
};

struct view_memory_state {
	int scroll; /* first holder row shown */
	bool utf8;
	bool full_names; /* set by ui (key v): C++ names whole */
	/* Kept by update. */
	struct view_memory_map *maps;
	int nmaps;
	struct view_memory_holder *holders;
	int nholders;
	bool started, tracing;
	char trace_err[256];
	int64_t grow_kb[3]; /* anon, file, shmem (+other) over the span */
	double span_s;	    /* of the mapping changes */
	double trace_s;	    /* seconds traced */
	uint64_t interval_ns, cost_ns;
	uint32_t nmappings, nanon;
	unsigned period, fault_period;
	uint64_t lost;
	int smaps_err;
	int page;	/* out: holder rows on screen */
	char heap[200]; /* "Java heap 20 MiB of 32 MiB, RSS ...", "" for native code */
	bool heap_na;	/* heap is "node heap: not available ..." */
};

/* Collect, sort and name the rows. 0 or -ENOMEM. */
int view_memory_update(struct view_memory_state *st, const struct view_memory_input *in, int cols,
		       int rows);
int view_memory_render(struct grid *g, const struct view_header *h,
		       const struct view_memory_state *st);
/* The memory view's keys (keymap.h): arrows, PgUp/PgDn, Home/End scroll
 * the code paths. view_memory_key looks a key up there (VIEW_ACTION_NONE:
 * not one of them). */
struct keymap;
extern const struct keymap view_memory_keymap;
struct view_action view_memory_key(struct view_memory_state *st, int key);
void view_memory_state_free(struct view_memory_state *st);

/* The top holder's function for the MEM alert ("cache_put": the alert
 * says "held by cache_put"; its line and rate are this view's), "" when
 * none holds anything of the window. */
void view_memory_top_holder(const struct view_memory_state *st, char *buf, size_t size);

#endif
