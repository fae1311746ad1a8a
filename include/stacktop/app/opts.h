/*
 * opts — the command line, parsed with getopt_long into struct opts.
 *
 * Pure: no printing, no exiting. opts_parse fills an error sentence for the
 * user on failure; main prints it with the usage hint and exits 2.
 *
 *   stacktop [OPTIONS] [-a]               (the whole machine)
 *   stacktop [OPTIONS] -p PID[,PID...]
 *   stacktop [OPTIONS] -- COMMAND [ARGS...]
 *   stacktop dump [--json] -p PID
 *   stacktop record [OPTIONS] [-d SECONDS] [-o FILE] -p PID | -- COMMAND
 *   stacktop report [OPTIONS] FILE
 *   stacktop diff [OPTIONS] BASE NEW | --base A1,A2 --new B1,B2
 */
#ifndef STACKTOP_OPTS_H
#define STACKTOP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "stacktop/ui/sort.h"

#define OPTS_MAX_PIDS 64

enum opts_cmd {
	OPTS_CMD_TOP = 0, /* the live view (TUI or -b) */
	OPTS_CMD_DUMP,	  /* every thread's stack once, then exit */
	OPTS_CMD_RECORD,  /* sample without a screen, write a profile file */
	OPTS_CMD_REPORT,  /* open a saved profile in the views */
	OPTS_CMD_DIFF,	  /* compare saved profiles */
};

/* --source-path may be given this many times. */
#define OPTS_SOURCE_PATH_MAX 16

/* The view batch mode prints (--view). */
enum opts_view {
	OPTS_VIEW_TOP = 0,
	OPTS_VIEW_ICICLE,
	OPTS_VIEW_THREADS,
	OPTS_VIEW_MEMORY,
	OPTS_VIEW_PROCESSES, /* the whole machine's process table */
};

struct opts {
	enum opts_cmd cmd;
	pid_t pids[OPTS_MAX_PIDS];
	int npids;
	char **command;		     /* argv of the command to launch (points into argv), or NULL */
	bool subprocesses;	     /* --subprocesses: follow every process the targets fork */
	bool debuginfod;	     /* --debuginfod[=URLS]: fetch missing debug files */
	const char *debuginfod_urls; /* its URLS (into argv), NULL: DEBUGINFOD_URLS */
	bool no_runtime_attach;	     /* never ask a JVM for its perf map (jitwatch) */
	unsigned rate_hz;	     /* --rate, default 99 */
	double delay_s;		     /* --delay, default 1.0 */
	unsigned window_s;	     /* --window, default 60 */
	bool batch;		     /* -b */
	long iterations;	     /* -n, 0 = forever */
	int limit;		     /* --limit, default 30 */
	enum sort_key sort;	     /* --sort, default own */
	enum opts_view view;	     /* --view, default top (batch mode) */
	bool view_given;
	bool all;	     /* -a, or no target at all: every process on the machine */
	unsigned stack_size; /* --stack-size BYTES, default 16384, 512..65528, multiple of 8 */
	bool lines;	     /* -L: start aggregating by line */
	bool hide_kernel;    /* --no-kernel: start with kernel frames hidden */
	bool ascii;	     /* --ascii: no block characters in charts */
	unsigned
	    spike_for_s; /* --spike-for: seconds above 2x baseline before the alert, default 30 */
	bool wall;	 /* --mode wall / -w: wall-clock (ptrace) sampling */
	bool rate_given; /* --rate was given (wall mode picks its own default) */
	unsigned events; /* --events: cpu mode's kind of perf events, enum perf_events order */
	bool events_given;
	bool idle_hidden;   /* --no-idle: start with idle threads hidden (wall mode, key i) */
	bool full_names;    /* --full-names: C++ names with return type and parameters (key v) */
	bool json;	    /* dump --json */
	bool native;	    /* dump --native */
	const char *output; /* record -o FILE */
	const char *format; /* record --format folded|pprof|speedscope, NULL: from -o's ending */
	bool per_thread;    /* record --per-thread: a root frame per thread (folded) */
	bool memory;	    /* record --memory: the memory attribution as pprof (inuse_space) */
	bool force;	    /* overwrite existing output files */
	const char *output_dir; /* where the TUI's w key writes, default "." */
	unsigned
	    output_mode;   /* --output-mode: written profiles' mode, default 0600, at most 0644 */
	double duration_s; /* record -d SECONDS, 0: until Ctrl-C */
	const char *report_file;	  /* report FILE */
	const char *diff_base, *diff_new; /* diff: comma-separated files (point into argv) */
	double fail_above;		  /* diff --fail-above PCT, < 0: not given */
	const char *annotate; /* --annotate FUNC: open (batch: print) the annotate view on FUNC */
	const char *source_path[OPTS_SOURCE_PATH_MAX + 1]; /* --source-path DIR..., NULL-ended */
	int nsource_path;
	bool help;    /* -h */
	bool version; /* -V */
};

/* Parse argv. 0 on success; -EINVAL with a one-sentence message in err on a
 * usage error (unknown option, bad number, -p and a command both given,
 * neither given). --help and --version succeed without a target. */
int opts_parse(int argc, char **argv, struct opts *o, char *err, size_t errsz);

/* The --help text (ends with a newline). */
extern const char opts_usage[];

#endif
