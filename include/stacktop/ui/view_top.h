/*
 * view_top — the py-spy style top-N table of functions: %Own %Total OwnTime
 * TotalTime Function (file:line) Module.
 *
 * Two steps. view_top_update (on the tick, and after a key) asks the window
 * for the rows, sorts them and keeps them in the state, with the selection
 * clamped; view_top_render draws the kept rows from a const state, so
 * drawing twice gives the same grid and a frozen (paused) state keeps its
 * rows however the window changes. %Own and %Total are shares of the
 * samples in view (the window, narrowed to a thread when one is chosen);
 * OwnTime/TotalTime are those samples times the sampling period (CPU
 * seconds in cpu mode).
 *
 * Wall mode (state.wall): the columns are %Own %Total OnCPU OffCPU Wait:
 * each row's wall time split into running and waiting, and the wait kind
 * that dominates it; sort keys map OWN → %Own (where threads wait, the
 * default), TOTAL → %Total, OWNTIME → OnCPU, TOTALTIME → OffCPU. A
 * "wall time: ..." line follows the header (built by view_top_update from
 * window_wait_counts); hide_idle leaves out threads that only sleep or
 * wait for I/O (key i).
 *
 * Whole machine (by_process): a row per (process, function) with a
 * PROCESS column ("floor 4242", from process_label) after the numbers;
 * pid narrows the rows to that process's stacks (no PROCESS column).
 * alerts (the box's verdicts, procwords_alerts) is an alerts line above
 * the table, after the metrics' alerts when there are metrics.
 */
#ifndef STACKTOP_VIEW_TOP_H
#define STACKTOP_VIEW_TOP_H

#include <stdbool.h>

#include <sys/types.h>

#include "stacktop/ui/grid.h"
#include "stacktop/proc/locks.h"
#include "stacktop/ui/sort.h"
#include "stacktop/ui/view.h"
#include "stacktop/model/window.h"

struct metrics;

/* A row as view_top_update kept it: the window's counts and a copy of the
 * frame that names it (the names live as long as the symbols), so a
 * frozen table needs nothing from the window to be drawn again. */
struct view_top_row {
	struct window_top_row r;
	struct frame f;
	/* Wall mode, a row that mostly waits on locks: the thread that held
	 * the locks its waiters waited on most, and its share (0: none known). */
	pid_t holder;
	double holder_pct;
	char proc[48]; /* by_process: "comm pid", escaped ("" otherwise) */
};

struct view_top_state {
	enum sort_key sort;
	bool lines;	 /* aggregate by file:line instead of function */
	bool full_names; /* C++ names whole (key v): return type, parameters */
	bool hide_kernel;
	int tid;		 /* 0: all threads */
	int selected;		 /* row index in sorted order */
	int scroll;		 /* first row shown */
	double period_s;	 /* seconds one sample stands for (1/rate) */
	int limit;		 /* batch mode: max rows (0: fit the grid) */
	uint32_t selected_frame; /* out: frame of the selected row (for Enter); UINT32_MAX: none */
	bool batch;		 /* no footer, no selection highlight, at most limit rows */
	int nrows;		 /* out: rows in the table (all, not only those shown) */
	int page;		 /* out: table rows that fit on screen (for PgUp/PgDn) */
	/* Paused display: update keeps the rows it has (still sorted and
	 * scrolled as the keys say) while sampling goes on. */
	bool frozen;
	/* Kept by view_top_update, sorted; render only reads them. */
	struct view_top_row *kept;
	size_t nkept;
	uint64_t kept_total;
	bool have_rows;	      /* kept holds a snapshot (even an empty one) */
	char wall_split[256]; /* wall mode: "running 4% · lock 61% ..." ("" none) */
	/* Optional: alerts, CPU and memory charts above the table (TUI), or
	 * the CPU/MEM series lines and alerts (batch). */
	const struct metrics *metrics;
	/* Set by the app: who held the locks waited on (wall mode: lock-wait
	 * rows end with "held by writer-3 62%"); NULL: none. */
	const struct locks *locks;
	bool charts;	/* 'g' hides them */
	bool utf8;	/* block characters in the charts */
	bool wall;	/* wall-clock columns (see above) */
	bool hide_idle; /* wall mode: leave out idle threads */
	/* Whole machine (set by the app): only process pid's stacks (0:
	 * all), a row per (process, function) with a PROCESS column, the
	 * label of a process for that column, the box's alerts ("" / NULL:
	 * none). */
	int pid;
	bool by_process;
	void (*process_label)(const void *ctx, int pid, char *buf, size_t size);
	const void *process_ctx;
	const char *alerts;
};

/* Free what the state keeps (the rows); the next update takes new ones. */
void view_top_state_free(struct view_top_state *st);

/* On each refresh tick and after a key: unless frozen (and already holding
 * rows), take the rows from the window (narrowed, kernel hidden, ... as the
 * state says) and the wall-time split; then sort them, and clamp the
 * selection and scroll for a cols x rows screen (header h, which may be
 * NULL), setting selected_frame, nrows and page. 0 or -errno. */
int view_top_update(struct view_top_state *st, struct window *w, const struct view_header *h,
		    int cols, int rows);

/* Draw header + table + footer into g (cleared first) from what update
 * kept; changes nothing. A grid under 60x12 in interactive mode gets only
 * a "terminal too small" notice. 0 or -errno. */
int view_top_render(struct grid *g, const struct view_header *h, const struct view_top_state *st);

/* The top view's keys (keymap.h), for dispatch and the help screen:
 * s > / S <: next / previous sort column; arrows, PgUp/PgDn, Home/End move
 * the selection (VIEW_ACTION_USED); Esc while narrowed to a thread:
 * VIEW_ACTION_NARROW_ALL; Enter on a row: VIEW_ACTION_OPEN_ICICLE with its
 * frame; a: VIEW_ACTION_ANNOTATE with the selected row's frame (frame_copy
 * NULL: none). */
struct keymap;
extern const struct keymap view_top_keymap;
/* Key (a character or KEYS_*) looked up in view_top_keymap; anything it
 * does not have: VIEW_ACTION_NONE. */
struct view_action view_top_key(struct view_top_state *st, int key);

#endif
