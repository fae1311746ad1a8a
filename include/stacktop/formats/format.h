/*
 * format — what each profile format on disk offers, as one table a format:
 * folded.h, pprof.h and speedscope.h each export theirs, export.c writes
 * through them and report.c reads through them, so neither asks which
 * format it has past picking the table.
 *
 * Neither function keeps anything: render appends to the caller's buffer,
 * load adds to the caller's stackset. The tables are constant.
 */
#ifndef STACKTOP_FORMAT_H
#define STACKTOP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct export_opts;
struct sbuf;
struct selection;
struct stackset;
struct window;

struct format_ops {
	const char *name;	     /* as --format spells it: "folded" */
	const char *ext;	     /* of the files written: ".folded" */
	const char *const *suffixes; /* a path ending in one is this format; NULL-ended */
	/* The selected stacks of w as the format appended to out. 0, -ENOMEM
	 * or -EIO (see the format's header for what it may change in s). */
	int (*render)(struct window *w, const struct export_opts *o, struct selection *s,
		      struct sbuf *out);
	/* data[0..len) into ss (name for messages). 0, or -EINVAL, -EFBIG or
	 * -ENOMEM with one sentence in err (the format's header lists why). */
	int (*load)(struct stackset *ss, const void *data, size_t len, const char *name, char *err,
		    size_t errsz);
	/* Do the first bytes of a file look like this format? NULL: any file
	 * that no format sniffed before it (report tries them in order). */
	bool (*sniff)(const uint8_t *d, size_t n);
};

#endif
