/*
 * view_annotate — the annotate view: one function's instructions with their
 * share of its own samples, source lines between them (annotate.c builds
 * and counts them; this file only draws and moves the selection).
 *
 * Three modes, cycled by `a`: mixed (source lines, then their
 * instructions), instructions only, source only (each line with the sum of
 * its instructions). Render is pure (const state → grid); the state holds
 * the struct annotate the ui opened. Keys: moving, `a`, Esc (close) and
 * Enter on a call (follow: the ui finds the callee in the window).
 */
#ifndef STACKTOP_VIEW_ANNOTATE_H
#define STACKTOP_VIEW_ANNOTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/model/annotate.h"
#include "stacktop/ui/grid.h"

enum view_annotate_mode {
	VIEW_ANNOTATE_MIXED = 0,
	VIEW_ANNOTATE_INSNS,
	VIEW_ANNOTATE_SOURCE,
	VIEW_ANNOTATE_MODES
};

struct view_annotate_state {
	bool open;
	bool batch; /* all lines, no selection, no footer */
	enum view_annotate_mode mode;
	int selected; /* index among the lines the mode shows */
	int scroll;
	int page;	    /* out: lines that fit (PgUp/PgDn) */
	char which[512];    /* sanitized: "hottest of 3 matches; also: ..." or "" */
	const char *status; /* the ui's status message, drawn over the footer; NULL: none */
	int pid;	    /* set by ui (whole machine): that process's samples only, 0: all */
	struct annotate a;
};

/* What a key asks of the ui. */
enum view_annotate_req {
	VIEW_ANNOTATE_NONE = 0, /* not used */
	VIEW_ANNOTATE_USED,
	VIEW_ANNOTATE_CLOSE,
	VIEW_ANNOTATE_FOLLOW, /* open the callee at *target */
};

/* Lines the mode shows (for batch sizing). */
int view_annotate_count(const struct view_annotate_state *st);
void view_annotate_render(const struct view_annotate_state *st, struct grid *g);
/* The annotate view's keys (keymap.h; not a section of the help screen:
 * the view's footer says them): a cycles the mode, Enter on a call asks to
 * follow it (*target: the callee's address), Esc to close, arrows,
 * PgUp/PgDn, Home/End move. view_annotate_key looks a key up there. */
struct keymap;
extern const struct keymap view_annotate_keymap;
enum view_annotate_req view_annotate_key(struct view_annotate_state *st, int key, uint64_t *target);
struct window;
struct sym;
struct frame;

/* Open the annotation of the function f names (a copy as a view shows it,
 * or a frame of the window): counted, read, disassembled. On failure a
 * sentence for the status line in msg and -ENOENT (no samples of its own,
 * no name), or -ENOMEM. sy may be NULL (a saved profile: no code). */
int view_annotate_open_frame(struct view_annotate_state *st, const struct window *w, struct sym *sy,
			     const char *const *srcdirs, const struct frame *f, char *msg,
			     size_t msize);
/* The same for the function called name (--annotate): the hottest match;
 * st->which says which when several matched. -ENOENT when none has
 * samples yet. */
int view_annotate_open_name(struct view_annotate_state *st, const struct window *w, struct sym *sy,
			    const char *const *srcdirs, const char *name, char *msg, size_t msize);
/* Enter on a call: annotate the callee at target if it is sampled. */
int view_annotate_follow(struct view_annotate_state *st, const struct window *w, struct sym *sy,
			 const char *const *srcdirs, uint64_t target, char *msg, size_t msize);
/* The refresh: the window's counts into the lines. */
void view_annotate_update(struct view_annotate_state *st, const struct window *w);
/* Close the annotation (frees what annotate_open took). */
void view_annotate_close(struct view_annotate_state *st);

#endif
