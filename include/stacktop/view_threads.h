/*
 * view_threads — the threads view (key 3): one row per thread of the
 * target, and one per unreaped (zombie) child process:
 *
 *     TID  NAME            STATE          CPU now  floor  last 60s (CPU)   SAMPLES  HOTTEST NOW
 *    4250  poller          R running        30.0%    29%  :::::::::::::::      1,780  busy_poll
 * BUSY FLOOR
 *
 * state letter with a word (and the kernel function a sleeping thread waits
 * in), CPU % of one core in the last second, the thread's floor (p10) over
 * the window, a sparkline of its CPU across the window, its samples in the
 * window and its hottest function, then the flags a user acts on:
 * BUSY FLOOR, STUCK (D for 12s), ZOMBIE.
 *
 * A pure function of (header, metrics, window, state, grid size) into a
 * grid, like view_top. The renderer clamps the selection, keeps it on the
 * same thread when rows are re-sorted between refreshes, and reports the
 * selected thread (for Enter: "only this thread") and the page height.
 */
#ifndef STACKTOP_VIEW_THREADS_H
#define STACKTOP_VIEW_THREADS_H

#include <stdbool.h>
#include <sys/types.h>

#include "stacktop/grid.h"
#include "stacktop/metrics.h"
#include "stacktop/view.h"
#include "stacktop/window.h"

enum view_threads_sort {
	VIEW_THREADS_SORT_CPU = 0, /* CPU now, highest first (default) */
	VIEW_THREADS_SORT_FLOOR,   /* floor over the window, highest first */
	VIEW_THREADS_SORT_SAMPLES, /* samples in the window, most first */
	VIEW_THREADS_SORT_TID,	   /* TID, ascending */
	VIEW_THREADS_SORT_NAME,	   /* name, then TID */
	VIEW_THREADS_SORT_COUNT
};

struct view_threads_state {
	enum view_threads_sort sort;
	int selected;	    /* row index in sorted order */
	int scroll;	    /* first row shown */
	bool utf8;	    /* block characters in the sparklines */
	pid_t selected_tid; /* out: TID of the selected thread; 0 when the
			     * selection is a zombie child or there are no rows */
	int page;	    /* out: table rows that fit on screen (PgUp/PgDn) */
	/* Internal: the row the selection follows across re-sorts (a TID, or a
	 * zombie child's pid); reset by the movement keys. */
	pid_t follow;
	int nrows; /* out: rows in the table (all, not only those shown) */
};

/* "cpu", "floor", "samples", "tid", "name". */
const char *view_threads_sort_name(enum view_threads_sort s);

/* Render header + column header + rows + footer into g (cleared first). m
 * may be NULL (no readings yet). A grid under 60x12 gets only the
 * "terminal too small" notice. 0 or -errno (from window_top). */
int view_threads_render(struct grid *g, const struct view_header *h, const struct metrics *m,
			struct window *w, struct view_threads_state *st);

/* 's' cycles the sort; arrows, PgUp/PgDn, Home/End move the selection (the
 * renderer clamps it). Returns true if the key was used. Key codes are
 * plain characters or SCREEN_KEY_* (stacktop/screen.h). */
bool view_threads_key(struct view_threads_state *st, int key);

#endif
