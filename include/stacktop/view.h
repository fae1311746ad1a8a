/*
 * view — what all views share: the header lines (target, rates, counters,
 * warnings) and the help screen.
 *
 * struct view_header is filled by main from the sampler, target and window;
 * views only read it. Strings in it are raw: the views sanitize them.
 */
#ifndef STACKTOP_VIEW_H
#define STACKTOP_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/grid.h"

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
	unsigned window_s;
	double span_s; /* seconds of data so far (<= window_s) */
	bool paused;
	bool exited; /* the target is gone */
	int exit_status_known;
	const char *exit_text; /* "exited with status 0", "killed by SIGKILL" */
	int filter_tid;	       /* 0: all threads */
	const char *filter_name;
	const char *status;  /* one-line message (e.g. "window reset"), or NULL */
	const char *warning; /* e.g. "sampling behind", or NULL */
	bool hide_kernel;
	bool lines;
	const int *pids; /* optional: all npids pids, shown as "pids 4242,4243 (+N)" */
	/* Wall mode: the process's wall time by wait kind, from
	 * window_wait_split ("running 4% · lock 61% · I/O 22% · sleep 13%");
	 * the top view draws it as "wall time: ..." under the header. NULL
	 * or "": no line. */
	const char *wall_split;
	const char *source; /* report: the profile file shown instead of a pid */
	bool batch; /* text output: no keys to mention */
	double pause_us; /* wall mode: mean time a thread is stopped per sample; 0: not shown */
};

/* Draw the header into rows y.. of g; returns the number of rows used:
 * 2, or 3 when there is an exit notice, a warning or a status message
 * (a warning that does not start with '!' gets "! " in front). */
int view_header_render(struct grid *g, int y, const struct view_header *h);

/* Help screen: every key, one per line. */
void view_help_render(struct grid *g);

/* Footer key hints on the last row; hints NULL: view_footer_default. */
void view_footer_render(struct grid *g, const char *hints);
extern const char view_footer_default[];

/* The smallest screen a view draws on; below it, a notice. */
#define VIEW_MIN_W 60
#define VIEW_MIN_H 12

/* Text centred on row y. */
void view_put_centered(struct grid *g, int y, const char *text, uint16_t attr);
/* Under VIEW_MIN_W x VIEW_MIN_H: draw "terminal too small: WxH (need ...)"
 * centred and return true; the view then draws nothing else. */
bool view_too_small(struct grid *g);

/* Keep a table's selection inside its n rows and its scroll so that the
 * selection is among the vis rows on screen. */
void view_clamp_selection(int *selected, int *scroll, int n, int vis);

#endif
