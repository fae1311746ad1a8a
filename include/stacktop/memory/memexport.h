/*
 * memexport — the memory attribution as a pprof profile: one sample per
 * code path that holds memory, its value the bytes it mapped and still
 * holds (sample type inuse_space/bytes, as go tool pprof names heap
 * profiles), the stack leaf first with file:line. `stacktop record
 * --memory` writes it when sampling is over.
 *
 * Written as export writes its files (formats/atomicfile.h): a temporary
 * file in the same directory, then put at path (never over an existing
 * file without force, never through a symbolic link), mode file_mode (0600
 * when 0).
 */
#ifndef STACKTOP_MEMEXPORT_H
#define STACKTOP_MEMEXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frames;
struct memhold;

struct memexport_opts {
	const char *cmdline; /* optional: a comment */
	double duration_s;
	bool force;
	unsigned file_mode;
};

/* The gzip'd profile into a malloc'd buffer (*buf, *len). 0 or -ENOMEM. */
int memexport_render(struct memhold *h, struct frames *fr, uint64_t now_ns,
		     const struct memexport_opts *o, char **buf, size_t *len);
/* Render and write to path; one sentence in err. 0 or -errno. */
int memexport_write(struct memhold *h, struct frames *fr, uint64_t now_ns,
		    const struct memexport_opts *o, const char *path, char *err, size_t errsz);

#endif
