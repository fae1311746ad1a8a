/*
 * ui — the front end between the model and the screen: which view is
 * shown, the help screen, pause, the status message, the keys that mean the
 * same in every view (a key table, keymap.h), and what the views' own keys
 * ask for (narrow to a thread, open the icicle or annotate a function).
 *
 * Each draw updates the shown view from the model (the view's update step:
 * rows, trees, file:line of what is on screen) and then renders it from a
 * const state: into the terminal (ui_draw_screen) or as text lines for
 * batch output (ui_print). The w key writes what is shown as a pprof file.
 *
 * The model (struct ui_model) is owned by main; ui keeps pointers to it
 * only for the duration of a call. ui never prints to the terminal itself
 * except through screen, and batch text goes to the stream it is given.
 */
#ifndef STACKTOP_UI_H
#define STACKTOP_UI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stacktop/formats/export.h"
#include "stacktop/ui/grid.h"
#include "stacktop/ui/sort.h"
#include "stacktop/ui/view.h"
#include "stacktop/ui/view_annotate.h"
#include "stacktop/ui/view_icicle.h"
#include "stacktop/ui/view_memory.h"
#include "stacktop/ui/view_procs.h"
#include "stacktop/ui/view_threads.h"
#include "stacktop/ui/view_top.h"

struct diff;
struct diff_snap;
struct locks;
struct machine;
struct metrics;
struct keymap;
struct window;

/* Keys 1-4 are TOP..MEMORY; key 0 the process table (whole machine only). */
enum ui_view {
	UI_VIEW_TOP = 0,
	UI_VIEW_ICICLE,
	UI_VIEW_THREADS,
	UI_VIEW_MEMORY,
	UI_VIEW_PROCS,
	UI_VIEW_COUNT
};

/* What the views read and the keys act on; owned by main. */
struct ui_model {
	struct window *w;
	struct metrics *metrics;   /* NULL: no threads view, no charts (a saved profile) */
	const struct locks *locks; /* lock waits and deadlocks; NULL: none read */
	const struct sym *sy;	   /* the help's symbol sources; NULL: none (a saved profile) */
	struct sym *sy_rw;	   /* the same, for annotate's lookups (NULL: no code to read) */
	const char *const *source_path; /* --source-path dirs, NULL-ended (may be NULL) */
	/* The w key: where to write, and what every export says about the
	 * target (per_thread, period, mode, force, thread names, cmdline). */
	int pid;
	const char *cmdline;
	/* Filled by ui_init from its struct ui_config. */
	const char *output_dir;
	struct export_opts export_base;
	/* The memory view (set by main before each draw; mm NULL: not
	 * started, see ui_wants_memory). */
	struct view_memory_input memory;
	/* Whole-machine mode (stacktop -a): every process, read by the
	 * process table, the top view's PROCESS column, the header and the
	 * alerts line (machine_procs, machine_find, machine_get_totals);
	 * NULL: not whole machine. */
	const struct machine *machine;
};

/* What main must do after a key. */
enum ui_request {
	UI_REQUEST_NONE = 0,
	UI_REQUEST_QUIT,
};

struct ui {
	enum ui_view view;
	bool batch, wall;
	bool help, paused;
	char status[1200];
	uint64_t status_until_ns;
	struct view_top_state top;
	struct view_threads_state threads;
	struct view_icicle_state icicle;
	struct view_annotate_state ann; /* shown over any view while open (key a) */
	const char *ann_name;		/* --annotate FUNC not opened yet */
	struct view_memory_state memory;
	struct view_procs_state procs; /* the process table (whole machine) */
	int pid;		       /* whole machine: the process every view shows, 0: all */
	char machine_alerts[1024];     /* the box's verdicts, for the top view's alerts line */
	char mem_holder[256];	       /* the MEM alert's top holder, shown by the charts */
	struct grid grid;
	/* The live diff: the b key's profile snapshot, and the D toggle. */
	struct diff_snap *baseline;
	uint64_t baseline_ns;
	bool diff_mode;
	struct diff *live; /* the last diff drawn (the icicle's colours read it) */
	/* `stacktop diff` in the TUI: the diff of the files, shown instead of
	 * the live one (borrowed), and what it compares. */
	const struct diff *fixed;
	const char *fixed_title;
};

/* How the front end starts, as the command line says: filled by the
 * program (main.c from its options), read by ui_init only. */
struct ui_config {
	enum ui_view view; /* the first view (batch: the one printed) */
	bool view_set;	   /* --view given: view is the first one even with machine */
	bool machine;	   /* whole machine: the first view is the process table */
	bool batch;	   /* text output instead of the TUI */
	bool wall;	   /* wall-clock mode: the wait split, key i */
	bool ascii;	   /* no block or UTF-8 characters even in a UTF-8 locale */
	enum sort_key sort;
	bool lines, hide_kernel, hide_idle; /* the L, K and i toggles at start */
	bool full_names;		    /* the v toggle at start: C++ names whole */
	int limit;			    /* batch: rows of the top table */
	const char *annotate;		    /* open the annotate view on it; NULL: none */
	/* What every export says (the w key, record): */
	const char *output_dir; /* where the w key writes */
	bool per_thread, force;
	unsigned rate_hz;     /* samples/s per thread (the profiles' period); 0: none */
	unsigned output_mode; /* written files' mode */
};

/* The first view, columns, toggles and sort as the config says; the
 * model's export_base from it too (w key, record). period_s: seconds one
 * sample stands for. */
void ui_init(struct ui *ui, const struct ui_config *c, double period_s, struct ui_model *m);
void ui_free(struct ui *ui);

/* A one-line message shown in the header for three seconds. */
void ui_status(struct ui *ui, const char *msg, uint64_t now_ns);
/* The header fields the front owns: pause, status, narrowing, toggles. */
void ui_header(const struct ui *ui, const struct ui_model *m, struct view_header *h,
	       uint64_t now_ns);
/* The thread the views are narrowed to (0: all). */
int ui_tid(const struct ui *ui);
/* Whole machine: the process every view is narrowed to (Enter in the
 * process table; Esc comes back), 0: the whole machine. The session reads
 * it for what only one process can have (the memory view's attribution). */
int ui_pid(const struct ui *ui);
/* Is the memory view shown (the session then starts the memory attribution)? */
bool ui_wants_memory(const struct ui *ui);
/* Is the threads view shown (the session then reads wait channels)? */
bool ui_wants_wchan(const struct ui *ui);
/* Is the display frozen (space)? Scheduled refreshes do not redraw it. */
bool ui_paused(const struct ui *ui);

/* Update the shown view from the model and draw it on the terminal. */
void ui_draw_screen(struct ui *ui, const struct ui_model *m, const struct view_header *h);
/* The same into a cols x rows grid (tests, and what ui_draw_screen blits). */
const struct grid *ui_draw(struct ui *ui, const struct ui_model *m, const struct view_header *h,
			   int cols, int rows);
/* Batch: the view as text lines (trailing blank rows dropped), then a blank
 * line. The top table is 200 x (limit + 6); the icicle and the threads
 * table a 200 x 40 screen. Whole machine (model machine set), when the
 * view is the top view or the process table: the process table (its top
 * 20 rows, 200 columns) and then the top view. */
void ui_print(struct ui *ui, const struct ui_model *m, const struct view_header *h, FILE *out);

/* One key: the shown view's own keys first where it takes text (the
 * icicle's search) or is shown over the others (annotate), then the
 * global ones, then the view's. */
enum ui_request ui_key(struct ui *ui, const struct ui_model *m, int key, uint64_t now_ns);

/* Every key table (keymap.h), in the help screen's order: the keys of
 * every view (ui's), then the top, threads, icicle, memory and annotate
 * views'. The help screen is drawn from them and the man page's key list
 * is checked against them. Returns the count; *maps: static. */
size_t ui_keymaps(const struct keymap *const **maps);

/* Export options for what is shown: model's base, the narrowing, the kernel
 * toggle and the icicle's zoom path (zoom must have room for nzoom names). */
void ui_export_opts(const struct ui *ui, const struct ui_model *m, struct export_opts *eo,
		    const char **zoom, size_t nzoom);

#endif
