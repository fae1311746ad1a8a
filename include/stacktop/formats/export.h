/*
 * export — the window's samples as a profile file other tools read: the
 * front of the three writers. It picks the format's writer (folded.c,
 * pprof.c, speedscope.c; see their headers for what each file holds) over
 * the stacks selection.c selects, and puts the result in memory, on an fd,
 * or in a file written whole or not at all (atomicfile.c).
 *
 * The window is only read. Pointers into it are not kept across calls.
 */
#ifndef STACKTOP_EXPORT_H
#define STACKTOP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct summary;
struct window;

/* The prefix of stacktop's own comments in a file (folded: after "# "):
 * "stacktop: {wall_s=...}" (summary_text between the braces), and in
 * folded files "stacktop: {second=N}". */
#define EXPORT_FOLDED_TAG "stacktop: "

enum export_format { EXPORT_FOLDED, EXPORT_PPROF, EXPORT_SPEEDSCOPE };

/* "folded", "pprof", "speedscope" → format; -EINVAL otherwise. */
int export_format_parse(const char *name, enum export_format *out);
/* By the file's ending: .folded/.txt → folded, .pb.gz/.pprof/.pb → pprof,
 * .json/.speedscope.json → speedscope; -EINVAL otherwise. */
int export_format_from_path(const char *path, enum export_format *out);
/* The usual ending for a format: ".folded", ".pb.gz", ".speedscope.json". */
const char *export_format_ext(enum export_format f);

struct export_opts {
	enum export_format format;
	int tid; /* 0: all threads */
	/* Whole-machine windows: only the stacks under process pid's root
	 * frame, written without it (as `-p PID` would have); 0: all. */
	int pid;
	bool per_thread;  /* a root frame per thread "name-TID" (folded, speedscope: a profile per
			     thread) */
	bool hide_kernel; /* drop kernel frames; otherwise folded marks them "_[k]" */
	/* optional path of function names from the root (the icicle zoom):
	 * only stacks that start with it are written (kept whole). Names are
	 * as the icicle shows them: function, "module+0xOFF", "0xPC". */
	const char *const *zoom;
	int nzoom;
	double period_s;    /* seconds per sample (1/rate); 0: unknown */
	double duration_s;  /* seconds the samples cover (pprof duration), 0: unknown */
	const char *mode;   /* "cpu" or "wall": sample type names; NULL = "cpu" */
	bool force;	    /* overwrite an existing file */
	unsigned file_mode; /* export_write's file mode, exactly (no umask); 0: 0600 */
	const char *(*thread_name)(void *ctx, int tid); /* optional; may return NULL */
	void *ctx;
	const char *cmdline; /* optional: pprof comment, speedscope name */
	/* A stack per (stack, thread, second) with its second since the first
	 * bucket: pprof label "second", folded blocks after a comment line
	 * "# stacktop: {second=N}" (FlameGraph skips it: it does not end in
	 * a number). The window's buckets should be one second wide. */
	bool per_second;
	const struct summary *summary; /* optional: the run's figures */
	/* optional: the run's per-second CPU, oldest first (record): a
	 * comment "stacktop: {cpu_1s=...}" (summary_cpu_text) */
	const double *cpu;
	size_t ncpu;
	/* the newest value's point (seconds of CLOCK_MONOTONIC, the samples'
	 * clock; it covers (cpu_t - 1, cpu_t]): with per_second, where cpu
	 * sits among the seconds, a comment "stacktop: {cpu_1s_at=K}"
	 * (summary_cpu_at_text); 0: unknown, none */
	double cpu_t;
};

/*
 * Write the window's samples to path, through atomicfile: a new temporary
 * file in the same directory, then renamed to path without replacing
 * anything (or over it with force): a failed write never leaves a partial
 * file or damages an existing one, and the window is untouched so the
 * caller can try again. A symbolic link at path is refused
 * (-ELOOP), an existing file without force is -EEXIST ("... exists; use
 * --force to overwrite it"). The file gets mode o->file_mode, 0600 when 0
 * (a profile holds command lines and paths). Errors are one sentence in
 * err. 0 or -errno.
 */
int export_write(struct window *w, const struct export_opts *o, const char *path, char *err,
		 size_t errsz);
/* The same into an open fd (stdout, tests). */
int export_write_fd(struct window *w, const struct export_opts *o, int fd, char *err, size_t errsz);
/* The same into a malloc'd buffer (*buf, *len; caller frees). */
int export_render(struct window *w, const struct export_opts *o, char **buf, size_t *len, char *err,
		  size_t errsz);
#endif
