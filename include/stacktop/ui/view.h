/*
 * view — what all views share: the header lines (target, rates, counters,
 * warnings), the help screen, the footer, and the result of a key.
 *
 * struct view_header is filled by the session (status_header: sampler,
 * target, window) and by ui (ui_header: pause, narrowing, toggles);
 * views only read it. Strings in it are raw: the views sanitize them. The
 * header carries numbers and enums, not sentences: the words a person reads
 * (the warning line, the wait split) are built here, in the view layer, so
 * the TUI and batch output say the same thing for the same state.
 *
 * Every view has the same three entry points (see view_top.h):
 *   view_X_update(state, model...)  on each refresh tick and after a key:
 *                                   computes and keeps what the view shows;
 *   view_X_render(grid, header, const state)  draws it, changes nothing;
 *   view_X_key(state, key)          moves the state, and returns a
 *                                   struct view_action for the app:
 *                                   the key looked up in the view's
 *                                   table (view_X_keymap, keymap.h),
 *                                   which the help screen is drawn from.
 */
#ifndef STACKTOP_VIEW_H
#define STACKTOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/ui/grid.h"

/* What a key did, for the app to carry out (views know no other view and
 * no app state). */
enum view_action_kind {
	VIEW_ACTION_NONE = 0,	    /* not used: the app may give it another meaning */
	VIEW_ACTION_USED,	    /* used by the view (redraw after view_X_update) */
	VIEW_ACTION_NARROW,	    /* show only thread .tid in every view */
	VIEW_ACTION_NARROW_ALL,	    /* show all threads again */
	VIEW_ACTION_OPEN_ICICLE,    /* open the icicle on window frame .frame */
	VIEW_ACTION_ANNOTATE,	    /* annotate .frame's function (UINT32_MAX: none selected) */
	VIEW_ACTION_NARROW_PROCESS, /* whole machine: show only process .pid in every view */
};

struct view_action {
	enum view_action_kind kind;
	int tid;	/* VIEW_ACTION_NARROW */
	uint32_t frame; /* VIEW_ACTION_OPEN_ICICLE, VIEW_ACTION_ANNOTATE */
	/* ... and the frame as the view showed it, when its id may have aged
	 * out since (valid until the view's next update); NULL: use .frame. */
	const struct frame *frame_copy;
	int pid; /* VIEW_ACTION_NARROW_PROCESS */
};

/* The one warning the header shows (the most pressing; main measures, the
 * view words it). The numbers it needs are in view_header.warn_*. */
enum view_warning {
	VIEW_WARNING_NONE = 0,
	VIEW_WARNING_SAMPLING_BEHIND, /* warn_hz samples/s of warn_expected_hz */
	VIEW_WARNING_LOST,	      /* warn_lost records lost in warn_span_s */
	VIEW_WARNING_BUSY,	      /* stacktop spends over half its time processing */
	VIEW_WARNING_TRACED,	      /* the target is traced by warn_tracer */
	VIEW_WARNING_KERNEL_HIDDEN,   /* no kernel frames: perf_event_paranoid */
};

/* Why samples fall short of the CPU burned (SAMPLING_BEHIND): the advice
 * depends on it, and "lower --rate" is right only when stacktop is slow. */
enum view_behind_cause {
	VIEW_BEHIND_UNKNOWN = 0,
	VIEW_BEHIND_KERNEL,	   /* kernel time not sampled: no permission */
	VIEW_BEHIND_SHORT_THREADS, /* per-task events miss threads that exit soon */
	VIEW_BEHIND_SLOW,	   /* stacktop itself is busy over a quarter of its time */
};

#define VIEW_GIL_MAX 8

struct view_header {
	int pid; /* first target pid */
	int npids;
	const char *cmdline; /* target command line */
	const char *mode;    /* "cpu" or "wall" */
	int nthreads;
	double rate_hz;		 /* requested samples/s per thread */
	double achieved_hz;	 /* samples/s received over the last second (all threads) */
	double expected_hz;	 /* samples/s we would get if every busy thread were sampled */
	uint64_t samples_window; /* in the window */
	uint64_t samples_total;	 /* since start */
	uint64_t lost;		 /* records lost by the kernel */
	uint64_t unwind_truncated, unwind_failed;
	/* stacks the rule cache stopped, and those libunwind then finished */
	uint64_t unwind_cache_stopped, unwind_finished;
	/* samples with Python frames, and those not matched with the native
	 * stack (their Python frames put on top) or cut short */
	uint64_t python, python_unmatched, python_torn;
	/* CPython targets: the threads holding a GIL (one a process) and
	 * whether a garbage collection is running in one of them */
	int gil_tids[VIEW_GIL_MAX];
	int ngil;
	bool py_gc;
	/* --debuginfod: on, and its debug files pending, fetched, not found */
	bool dbg_on;
	unsigned dbg_pending, dbg_found, dbg_missing;
	unsigned window_s;
	double span_s; /* seconds of data so far (<= window_s) */
	bool paused;
	bool exited; /* the target is gone */
	int exit_status_known;
	const char *exit_text; /* "exited with status 0", "killed by SIGKILL" */
	int filter_tid;	       /* 0: all threads */
	const char *filter_name;
	const char *status;		   /* one-line message (e.g. "window reset"), or NULL */
	enum view_warning warning;	   /* see view_warning_text */
	double warn_hz, warn_expected_hz;  /* SAMPLING_BEHIND */
	enum view_behind_cause warn_cause; /* SAMPLING_BEHIND: why */
	uint64_t warn_lost;		   /* LOST */
	double warn_span_s;		   /* LOST: seconds the count covers */
	int warn_tracer;		   /* TRACED: the tracer's pid */
	char warn_tracer_comm[16];	   /* TRACED: its name, raw ("" unknown) */
	bool hide_kernel;
	bool lines;
	const int *pids;    /* optional: all npids pids, shown as "pids 4242,4243 (+N)" */
	const char *source; /* report: the profile file shown instead of a pid */
	bool batch;	    /* text output: no keys to mention */
	double pause_us;    /* wall mode: mean time a thread is stopped per sample; 0: not shown */
	int threads_unsampled; /* threads that could not be sampled (shown when > 0) */
	/* Files from the target's file system refused as hostile or too big
	 * (a FIFO, a device, a 4 GiB debug file): their code has no names. */
	uint64_t files_refused;
	int unsampled_err;	   /* why: -errno (-EMFILE: "too many open files") */
	bool following;		   /* --subprocesses: "pid 4242 +3 children" */
	int nchildren;		   /* descendants followed now */
	int children_unfollowed;   /* descendants past the cap (shown when > 0) */
	uint64_t now_ns;	   /* the data's clock (ui_header sets it): the live diff's "now" */
	int children_max;	   /* the cap */
	const char *coverage_note; /* what the sampler cannot see (sampler_stats) */
	bool children_busy;	   /* not following, the targets' children use CPU */
	/* JIT code without names: the pid of the /tmp/perf-PID.map that is
	 * missing (a hint on line 3 when nothing more pressing is), 0: none */
	int jit_nomap_pid;
	/* Who makes the JIT code and what was done to name it (app/jitwatch):
	 * the hint names the remedy that fits the runtime; a JVM asked for
	 * its perf map says when, and how much is unnamed since. */
	struct view_jit {
		enum view_jit_runtime {
			VIEW_JIT_UNKNOWN = 0,
			VIEW_JIT_JVM,
			VIEW_JIT_NODE,
			VIEW_JIT_PYTHON,
		} runtime;
		int pid;      /* that process, our pid namespace (0: none seen) */
		int py_minor; /* python3.N: N (0 unknown) */
		enum view_jvm_attach {
			VIEW_JVM_NONE = 0,  /* not asked: --no-runtime-attach, or not a JVM */
			VIEW_JVM_ASKING,    /* the request is under way */
			VIEW_JVM_DONE,	    /* the JVM wrote its map for us ago_s ago */
			VIEW_JVM_NO_SOCKET, /* it did not open its attach socket */
			VIEW_JVM_NO_REPLY,  /* it did not answer */
			VIEW_JVM_REFUSED,   /* it answered with an error */
			VIEW_JVM_UNSAFE,    /* it does not catch SIGQUIT (-Xrs): not signalled */
			VIEW_JVM_FAILED,    /* credentials or paths */
		} attach;
		double ago_s;
		int unnamed_pct; /* of the window's samples: stacks through unnamed JIT code */
	} jit;
	/* % of the CPU samples in the window that are garbage collection
	 * (status: window_gc_counts); shown as "GC 23% of CPU" on line 2 from
	 * VIEW_GC_SHOWN_PCT; < 0: too few samples to say */
	double gc_pct;
	/* Whole-machine mode (set by ui_header from the machine): line 1 says
	 * "whole machine · 2 CPUs · 183 processes", or when every view is
	 * narrowed to one process "pid 4242 floor (Esc: whole machine)". */
	struct view_machine {
		bool on;
		int ncpu, nprocs;
		int pid;       /* narrowed to it, 0: the whole machine */
		char comm[32]; /* its name, raw */
	} machine;
};

#define VIEW_GC_SHOWN_PCT 3.0

/* Draw the header into rows y.. of g; returns the number of rows used:
 * 2, or 3 when there is an exit notice, a warning, a status message or a
 * hint (JIT code without a perf map). */
int view_header_render(struct grid *g, int y, const struct view_header *h);
/* The rows view_header_render will use (2 or 3). */
int view_header_height(const struct view_header *h);
/* The warning's sentence ("! 120 of 400 samples/s: kernel time is unseen
 * without CAP_PERFMON or root", ...), "" for VIEW_WARNING_NONE. */
void view_warning_text(const struct view_header *h, char *buf, size_t size);
/* "running 4% · lock 61% · I/O 22% · sleep 13%" from window_wait_counts:
 * kinds with no samples left out, "" when the sum is 0; ascii: ", "
 * between kinds instead of a middle dot. */
void view_wait_split(const uint64_t *counts, bool ascii, char *buf, size_t size);

struct sym_module_note;
struct keymap;
/* Help screen: the keys of the key tables (those on_help, a section each,
 * a line per binding or group of bindings; see keymap.h), the words on the
 * screen; then, as room allows, where each module's names came from (mods
 * from sym_modules; NULL, 0: none). */
void view_help_render(struct grid *g, const struct keymap *const *maps, size_t nmaps,
		      const struct sym_module_note *mods, size_t nmods);
/* Words for a set of SYM_SRC_* bits: "dynsym + eh_frame ranges",
 * "symtab; some pcs unnamed", "none: no symbols at all". Returns buf. */
const char *view_symbol_sources(unsigned sources, char *buf, size_t size);

/* Esc in a view narrowed to thread tid: back to all threads; when not
 * narrowed (tid 0) the key is not the view's. */
struct view_action view_all_threads(int tid);

/* Footer key hints on the last row; hints NULL: view_footer_default. */
void view_footer_render(struct grid *g, const char *hints);
extern const char view_footer_default[];
/* The top view's hints for `stacktop report FILE` (no pause). */
extern const char view_footer_report[];

/* The smallest screen a view draws on; below it, a notice. */
#define VIEW_MIN_W 60
#define VIEW_MIN_H 12

/* Text centred on row y. */
void view_put_centered(struct grid *g, int y, const char *text, uint16_t attr);
/* Batch: an alerts line ("! a   ! b   ! c") wrapped onto as many rows of g
 * as it needs from row y, each alert whole where it fits (a log must not
 * lose the last alerts to the width); g NULL: only count. Returns rows. */
int view_alerts_wrap(struct grid *g, int y, int width, const char *alerts, uint16_t attr);
/* A function's name as the views show it: a C++ name without its return
 * type and parameters ("app::Matrix<double>::multiply_rows"), or whole
 * when full (key v, --full-names). Raw target text either way: escape it. */
const char *view_func_name(const char *func, bool full, char *buf, size_t size);
/* Under VIEW_MIN_W x VIEW_MIN_H: draw "terminal too small: WxH (need ...)"
 * centred and return true; the view then draws nothing else. */
bool view_too_small(struct grid *g);

/* Keep a table's selection inside its n rows and its scroll so that the
 * selection is among the vis rows on screen. */
void view_clamp_selection(int *selected, int *scroll, int n, int vis);
/* Up, Down, PgUp, PgDn, Home and End move a table's selection by a row, by
 * page rows or to an end (never below 0; the caller clamps it to its rows
 * with view_clamp_selection); false, nothing moved, for any other key. */
bool view_move_selection(int *selected, int key, int page);

#endif
