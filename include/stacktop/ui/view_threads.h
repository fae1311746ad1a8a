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
 * DEADLOCK, BUSY FLOOR, STUCK (D for 12s), ZOMBIE, and for a thread waiting
 * on a lock its holder ("lock 0x7f…a0 held by alpha (1234)"; "held by
 * alpha (1234)" where that does not fit). A deadlock also gets an alert
 * line above the table: "! DEADLOCK alpha (1234) ⇄ beta (1235)".
 *
 * With threads of more than one process, PID and PROCESS (its name) come
 * first:
 *
 *      PID  PROCESS     TID  NAME            STATE          CPU now  floor  SAMPLES
 *     4502  nginx      4502  nginx           R running        40.0%    38%    4,012
 *
 * Update and render, like view_top: view_threads_update collects and sorts
 * the rows (from metrics and the window), keeps the selection on the same
 * thread when rows are re-sorted between refreshes, and reports the
 * selected thread (for Enter: "only this thread") and the page height;
 * view_threads_render draws them from a const state. The state owns its
 * rows (view_threads_state_free).
 */
#ifndef STACKTOP_VIEW_THREADS_H
#define STACKTOP_VIEW_THREADS_H

#include <stdbool.h>
#include <sys/types.h>

#include "stacktop/ui/grid.h"
#include "stacktop/proc/locks.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/ui/view.h"
#include "stacktop/model/window.h"

enum view_threads_sort {
	VIEW_THREADS_SORT_CPU = 0, /* CPU now, highest first (default) */
	VIEW_THREADS_SORT_FLOOR,   /* floor over the window, highest first */
	VIEW_THREADS_SORT_SAMPLES, /* samples in the window, most first */
	VIEW_THREADS_SORT_TID,	   /* PID, then TID, ascending */
	VIEW_THREADS_SORT_NAME,	   /* name, then TID */
	VIEW_THREADS_SORT_COUNT
};

/* A row as view_threads_update kept it. */
struct view_threads_row {
	pid_t id;	     /* TID, or a zombie child's pid */
	pid_t pid;	     /* its process (a zombie child: itself) */
	int ti;		     /* index in metrics->threads at update; -1: zombie child */
	uint64_t samples;    /* in the window */
	uint8_t wait;	     /* wall: the wait kind seen most, 0: none (rows on screen only) */
	uint8_t cpuwait_pct; /* wall: share of runnable samples waiting for a CPU */
	char hottest[128];   /* raw; filled for the rows on screen only */
};

struct view_threads_state {
	enum view_threads_sort sort;
	int selected;	  /* row index in sorted order */
	int scroll;	  /* first row shown */
	bool utf8;	  /* block characters in the sparklines */
	int tid;	  /* set by the app: the thread the views are narrowed to, 0: all */
	int pid;	  /* set by the app (whole machine): only this process's threads, 0: all */
	bool hide_kernel; /* set by the app: the hottest function skips kernel frames */
	bool full_names;  /* set by the app: C++ names whole (key v) */
	pid_t selected_tid; /* out: TID of the selected thread; 0 when the
			     * selection is a zombie child or there are no rows */
	int page;	    /* out: table rows that fit on screen (PgUp/PgDn) */
	/* Internal: the row the selection follows across re-sorts (a TID, or a
	 * zombie child's pid); reset by the movement keys. */
	pid_t follow;
	int nrows;		       /* out: rows in the table (all, not only those shown) */
	struct view_threads_row *rows; /* kept by update, sorted (nrows of them) */
	unsigned window_s;	       /* the sparkline's span, from update */
	bool multi; /* threads of several processes: PID and PROCESS columns, from update */
	/* Set by the app: lock waits and deadlocks (NULL: none). A waiter's
	 * flags say "lock 0x7f…a0 held by alpha (1234)", threads in a cycle
	 * are flagged DEADLOCK and an alert line names each cycle. */
	const struct locks *locks;
};

/* "cpu", "floor", "samples", "tid", "name". */
const char *view_threads_sort_name(enum view_threads_sort s);
/* One-letter thread state as a word: "running", "sleeping", "disk",
 * "stopped", "traced", "zombie", "dead", "idle", "unknown". */
const char *view_threads_state_word(char state);

/* On each refresh and after a key: collect the rows from m (which may be
 * NULL: no readings yet) and w, sort them, keep the selection on the
 * followed thread and inside a cols x rows screen, and find the hottest
 * function of the rows on screen. 0 or -errno (from window_top). */
int view_threads_update(struct view_threads_state *st, const struct view_header *h,
			const struct metrics *m, struct window *w, int cols, int rows);

/* Draw header + column header + rows + footer into g (cleared first) from
 * the kept rows and m (the same metrics update saw, or NULL); changes
 * nothing. A grid under 60x12 gets only the "terminal too small" notice. */
int view_threads_render(struct grid *g, const struct view_header *h, const struct metrics *m,
			const struct view_threads_state *st);

/* The threads view's keys (keymap.h), for dispatch and the help screen:
 * 'o' moves the selection to the holder of the selected thread's lock;
 * 's' cycles the sort; arrows, PgUp/PgDn, Home/End move the selection
 * (VIEW_ACTION_USED); Enter on a thread: VIEW_ACTION_NARROW with its TID;
 * Esc while narrowed: VIEW_ACTION_NARROW_ALL. */
struct keymap;
extern const struct keymap view_threads_keymap;
/* Key (a plain character or KEYS_*, stacktop/keys.h) looked up in
 * view_threads_keymap; anything it does not have: VIEW_ACTION_NONE. */
struct view_action view_threads_key(struct view_threads_state *st, int key);

void view_threads_state_free(struct view_threads_state *st);

/* The deadlock alert: "! DEADLOCK alpha (1234) ⇄ beta (1235)" (" <-> "
 * without utf8), a longer cycle as "a (1) → b (2) → c (3) → a", several
 * cycles one after the other; "" when lk has none. Names from m, escaped. */
void view_threads_deadlock_text(const struct metrics *m, const struct locks *lk, bool utf8,
				char *out, size_t size);

/* The name of thread tid for the icicle's per-thread roots (ctx: the
 * const struct metrics): "PID:TID name" when threads of several processes
 * are listed, else "tid TID name"; "" when metrics does not know it.
 * Names are escaped (text_sanitize). */
void view_threads_label(const void *ctx, int tid, char *buf, size_t size);

#endif
