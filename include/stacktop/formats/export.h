/*
 * export — write the window's samples in the formats other tools read.
 *
 *  - folded: "root;caller;leaf COUNT", one line per distinct stack of
 *    function names (the input of FlameGraph and most flame-graph tools),
 *    lines sorted; kernel frames carry FlameGraph's "_[k]" suffix (JIT
 *    frames "_[j]"); with
 *    per_thread each stack starts with a "name-TID" frame.
 *  - pprof: a gzip-compressed perftools.profiles.Profile (src/proto/
 *    profile.proto) as `go tool pprof` reads it: one Location per sampled
 *    pc, one Function per (name, file), one Mapping per module NAME (the
 *    window keeps names only, so no addresses ranges from the maps and no
 *    build-ids), sample types samples/count and cpu|wall/nanoseconds, the
 *    period, and "tid"/"thread" labels on each sample.
 *  - speedscope: a "sampled" profile per the file-format schema of the
 *    speedscope app (shared frames by (name, file), samples root first,
 *    weights in seconds, or counts with unit "none" without a period).
 *
 * The window is only read. Pointers into it are not kept across calls.
 */
#ifndef STACKTOP_EXPORT_H
#define STACKTOP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct window;

/* What `record` measured of the run, written into the file (a pprof comment
 * and a folded comment line, both "stacktop: {wall_s=... cpu_s=... avg_cpu=...
 * peak_cpu=... peak_rss=...}") for `stacktop diff` to set side by side. */
struct export_summary {
	double wall_s;	  /* seconds recorded */
	double cpu_s;	  /* CPU seconds the targets used meanwhile */
	double avg_cpu;	  /* % of one core, cpu_s / wall_s */
	double peak_cpu;  /* % of one core, the busiest second */
	uint64_t peak_rss; /* bytes */
};

/* The prefix of stacktop's own comments (folded: after "# "). */
#define EXPORT_FOLDED_TAG "stacktop: "

/* "wall_s=51.100 cpu_s=34.700 ..." (the text between the braces). */
void export_summary_text(const struct export_summary *s, char *buf, size_t size);
/* That text back (len bytes at s); -EINVAL when a field is missing. */
int export_summary_parse(const char *s, size_t len, struct export_summary *out);

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
	int tid;	  /* 0: all threads */
	bool per_thread;  /* a root frame per thread "name-TID" (folded, speedscope: a profile per thread) */
	bool hide_kernel; /* drop kernel frames; otherwise folded marks them "_[k]" */
	/* optional path of function names from the root (the icicle zoom):
	 * only stacks that start with it are written (kept whole). Names are
	 * as the icicle shows them: function, "module+0xOFF", "0xPC". */
	const char *const *zoom;
	int nzoom;
	double period_s;  /* seconds per sample (1/rate); 0: unknown */
	double duration_s; /* seconds the samples cover (pprof duration), 0: unknown */
	const char *mode; /* "cpu" or "wall": sample type names; NULL = "cpu" */
	bool force;	  /* overwrite an existing file */
	unsigned file_mode; /* export_write's file mode, exactly (no umask); 0: 0600 */
	const char *(*thread_name)(void *ctx, int tid); /* optional; may return NULL */
	void *ctx;
	const char *cmdline; /* optional: pprof comment, speedscope name */
	/* A stack per (stack, thread, second) with its second since the first
	 * bucket: pprof label "second", folded blocks after a comment line
	 * "# stacktop: {second=N}" (FlameGraph skips it: it does not end in
	 * a number). The window's buckets should be one second wide. */
	bool per_second;
	const struct export_summary *summary; /* optional: the run's figures */
};

/*
 * Write the window's samples to path. The data goes to a new temporary file
 * in the same directory (O_CREAT|O_EXCL|O_NOFOLLOW), which is then renamed
 * to path with RENAME_NOREPLACE (or over it with force): a failed write never
 * leaves a partial file or damages an existing one, and the window is
 * untouched so the caller can try again. A symbolic link at path is refused
 * (-ELOOP), an existing file without force is -EEXIST ("... exists; use
 * --force to overwrite it"). The file gets mode o->file_mode, 0600 when 0
 * (a profile holds command lines and paths). Errors are one sentence in
 * err. 0 or -errno.
 */
int export_write(struct window *w, const struct export_opts *o, const char *path, char *err,
		 size_t errsz);
/* The same into an open fd (stdout, tests). */
int export_write_fd(struct window *w, const struct export_opts *o, int fd, char *err,
		    size_t errsz);
/* The same into a malloc'd buffer (*buf, *len; caller frees). */
int export_render(struct window *w, const struct export_opts *o, char **buf, size_t *len,
		  char *err, size_t errsz);
/* in[0..n) gzip-compressed (RFC 1952, as pprof files are) into a malloc'd
 * *buf of *len bytes. 0, -ENOMEM or -EIO. */
int export_gzip(const uint8_t *in, size_t n, char **buf, size_t *len);

#endif
