/*
 * record — `stacktop record`: the output file is checked before sampling
 * starts (a wrong name or an existing file is refused at once, not after a
 * whole recording), and written in one go when sampling ends.
 *
 * Errors: -EINVAL (the format cannot be told: a usage error), -EEXIST (the
 * file exists and force is off), or export_write's; one sentence in err.
 */
#ifndef STACKTOP_RECORD_H
#define STACKTOP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/formats/export.h"

struct window;

/* The format named by format ("folded", "pprof", "speedscope"), or told
 * by the file name when format is NULL. */
int record_format(const char *output, const char *format, enum export_format *out, char *err,
		  size_t errsz);
int record_check(const char *output, const char *format, bool force, char *err, size_t errsz);
/* Write w to output with eo (its format set here). */
int record_write(struct window *w, struct export_opts *eo, const char *output, const char *format,
		 char *err, size_t errsz);
/* "recording pid 42: 12s, 1,188 samples, lost 0" */
void record_progress_text(int pid, double elapsed_s, uint64_t samples, uint64_t lost, char *buf,
			  size_t size);

#endif
