/*
 * view_icicle — the interactive icicle (flame graph, root on top).
 *
 *   header (view_header_render)
 *   all 100%  >  worker 99.9%              search: leaf  3 matches 60.4%
 *   [all                                                               ]
 *   [worker 99.9%                                                      ]
 *   [alpha 50.1%                    ][beta 30.0%          ][gamma 19.9% ]
 *   selected: alpha  tree.c:40  module tree  self 0.1% (2 samples)  ...
 *   footer: keys and the colour legend
 *
 * The breadcrumb is the path from the root to the zoomed node, which fills
 * the first icicle row. Selection and zoom are kept as PATHS of function
 * keys (struct icicle_path), so they survive the rebuild on every refresh;
 * when the selected path leaves the window the nearest surviving caller is
 * selected and the breadcrumb line says so, and the path comes back by
 * itself if its samples do.
 *
 * Ownership: the state owns its paths and a private cache (the tree and
 * layout of the last update, the compiled search); zero-initialise it,
 * free it with view_icicle_state_free. Keys act on the last updated tree
 * (what the user sees), so update at least once before sending keys.
 * Render only reads the state.
 *
 * While the header says paused, update reuses the last tree: the picture
 * stays still while keys still move the selection.
 */
#ifndef STACKTOP_VIEW_ICICLE_H
#define STACKTOP_VIEW_ICICLE_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/ui/grid.h"
#include "stacktop/model/icicle.h"
#include "stacktop/ui/view.h"
#include "stacktop/model/window.h"

struct view_icicle_priv;

struct view_icicle_state {
	bool inverted;	  /* bottom-up: leaf functions on the first row (key f) */
	bool hide_kernel; /* set by ui (key K) */
	int tid;	  /* 0: all threads; set by ui from the threads view */
	int pid;	  /* whole machine: one process's stacks, 0: all; set by ui */
	bool per_thread;  /* one root per thread (key t) */
	/* key x: every call of a recursion its own row; by default a function
	 * calling itself is one bar, "depth ×13" */
	bool unfold_recursion;
	bool full_names; /* set by ui (key v): C++ names whole on the bars */
	/* Set by the app: names the per-thread roots (icicle_query). */
	void (*thread_label)(const void *ctx, int tid, char *buf, size_t size);
	const void *label_ctx;
	bool color_by_module; /* key c: colour by module instead of by kind */
	/* Optional (the live diff, key D): each box's attribute from the
	 * change of its call path (node of tree t, in t's direction); the
	 * legend then says red grew, blue shrank, grey not significant. NULL:
	 * colour by kind or module. */
	uint16_t (*diff_attr)(const void *ctx, const struct icicle *t, uint32_t node);
	const void *diff_ctx;
	char search[128];    /* accepted search (regex, or substring if invalid); "" none */
	bool editing_search; /* after '/', until Enter or Esc */
	char edit[128];	     /* the search being typed */
	struct icicle_path sel, zoom; /* from below the root; empty = the root */
	bool utf8;		      /* "…" and arrows; ASCII otherwise */

	/* out, from the last update */
	bool aged_out;		 /* the selected path is no longer in the window */
	uint32_t selected_frame; /* window frame of the selection; UINT32_MAX: none/root */
	int nmatches;		 /* frames matching the search */
	double match_share;	 /* share (0..1) of the samples whose stack has a match */

	struct view_icicle_priv *priv; /* private cache, see above */
};

/* On each refresh and after a key: build the merged tree from w (while
 * the header says paused, keep the last one unless the query changed),
 * map the selection and zoom paths onto it, match the search, copy the
 * selection's frame and lay out the boxes for a cols x rows screen. Sets
 * the "out" fields. 0 or -errno. */
int view_icicle_update(struct view_icicle_state *st, const struct view_header *h, struct window *w,
		       int cols, int rows);

/* Draw into g (cleared first) what the last update laid out; changes
 * nothing. A grid under 60x12 gets only the "terminal too small" notice.
 * 0 or -errno. */
int view_icicle_render(struct grid *g, const struct view_header *h,
		       const struct view_icicle_state *st);

/* The icicle's keys (keymap.h), for dispatch and the help screen: arrows
 * move (up: caller, down: heaviest callee, left/right: neighbour on the
 * row), Enter zooms, Esc or Backspace zooms out one level (at the root Esc
 * clears a search), '/' starts a search, n/N next/previous match, f
 * bottom-up, c colour mode, t one root per thread, a: VIEW_ACTION_ANNOTATE
 * on the selected frame. */
struct keymap;
extern const struct keymap view_icicle_keymap;
/* Handle a key (a character or KEYS_*) through view_icicle_keymap. Returns
 * VIEW_ACTION_USED when the key was used; VIEW_ACTION_NONE lets the caller
 * handle it (q, 1, 2, space, ...). While a search is being typed every key
 * is text (typed characters, Backspace, Enter accepts and selects the first
 * match, Esc cancels), and the search is compiled and matched here, on the
 * key. */
struct view_action view_icicle_key(struct view_icicle_state *st, int key);

/* Select the function of this window frame (Enter in the top view): top-down
 * at its heaviest call path, or bottom-up when the function is only ever a
 * leaf. Zoom goes back to the root. */
void view_icicle_jump(struct view_icicle_state *st, struct window *w, uint32_t frame);
/* The same for a frame known by a copy (the top view's selected row), whose
 * id may have aged out since it was shown. */
void view_icicle_jump_to(struct view_icicle_state *st, struct window *w, const struct frame *f);

void view_icicle_state_free(struct view_icicle_state *st);

#endif
