/*
 * view_top — the py-spy style top-N table of functions: %Own %Total OwnTime
 * TotalTime Function (file:line) Module.
 *
 * A pure function from (header, window, state, grid size) to a grid. %Own
 * and %Total are shares of the samples in view (the window, narrowed to a
 * thread when one is chosen); OwnTime/TotalTime are those samples times the
 * sampling period (CPU seconds in cpu mode). The state's selection and
 * scroll are clamped by the renderer so keys can move them blindly.
 *
 * Wall mode (state.wall): the columns are %Own %Total OnCPU OffCPU Wait:
 * each row's wall time split into running and waiting, and the wait kind
 * that dominates it; sort keys map OWN → %Own (where threads wait, the
 * default), TOTAL → %Total, OWNTIME → OnCPU, TOTALTIME → OffCPU. A "wall time: ..." line (view_header.wall_split)
 * follows the header; hide_idle leaves out threads that only sleep or
 * wait for I/O (key i).
 */
#ifndef STACKTOP_VIEW_TOP_H
#define STACKTOP_VIEW_TOP_H

#include <stdbool.h>

#include "stacktop/grid.h"
#include "stacktop/view.h"
#include "stacktop/window.h"

enum view_top_sort {
	VIEW_TOP_SORT_OWN = 0,	 /* %Own */
	VIEW_TOP_SORT_TOTAL,	 /* %Total */
	VIEW_TOP_SORT_OWNTIME,	 /* OwnTime */
	VIEW_TOP_SORT_TOTALTIME, /* TotalTime */
	VIEW_TOP_SORT_COUNT
};

struct metrics;

struct view_top_state {
	enum view_top_sort sort;
	bool lines; /* aggregate by file:line instead of function */
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
	/* Paused display: the rows of the last live render are kept and drawn
	 * again (sorted and scrolled as the keys say) while sampling goes on. */
	bool frozen;
	struct window_top_row *kept;
	size_t nkept;
	uint64_t kept_total;
	/* Optional: alerts, CPU and memory charts above the table (TUI), or
	 * the CPU/MEM series lines and alerts (batch). */
	const struct metrics *metrics;
	bool charts; /* 'g' hides them */
	bool utf8; /* block characters in the charts */
	bool wall; /* wall-clock columns (see above) */
	bool hide_idle; /* wall mode: leave out idle threads */
};

/* Free what the state keeps (the frozen rows). */
void view_top_state_free(struct view_top_state *st);

/* Parse "own|total|owntime|totaltime"; -EINVAL otherwise. */
int view_top_parse_sort(const char *s, enum view_top_sort *out);

/* Render header + table + footer into g (cleared first). A grid under
 * 60x12 in interactive mode gets only a "terminal too small" notice.
 * 0 or -errno. */
int view_top_render(struct grid *g, const struct view_header *h, struct window *w,
		    struct view_top_state *st);

#endif
