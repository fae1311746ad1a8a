/*
 * record — check the output of `stacktop record` up front, write it at the
 * end (see record.h).
 */
#include "stacktop/app/record.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "stacktop/lib/text.h"

int record_format(const char *output, const char *format, enum export_format *out, char *err,
		  size_t errsz)
{
	int rc = format ? export_format_parse(format, out) : export_format_from_path(output, out);
	if (rc < 0 && format) {
		snprintf(err, errsz,
			 "invalid --format value '%s': expected folded, pprof or speedscope.",
			 format);
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(
		    err, errsz,
		    "cannot tell the format of '%s' from its name: use --format folded, pprof or "
		    "speedscope.",
		    output);
		return -EINVAL;
	}
	return 0;
}

int record_check(const char *output, const char *format, bool force, char *err, size_t errsz)
{
	struct stat st;
	enum export_format f;
	int rc = record_format(output, format, &f, err, errsz);
	if (rc)
		return rc;
	if (!force && lstat(output, &st) == 0) {
		snprintf(err, errsz, "%s exists; use --force to overwrite it.", output);
		return -EEXIST;
	}
	return 0;
}

int record_write(struct window *w, struct export_opts *eo, const char *output, const char *format,
		 char *err, size_t errsz)
{
	int rc = record_format(output, format, &eo->format, err, errsz);
	return rc ? rc : export_write(w, eo, output, err, errsz);
}

void record_progress_text(int pid, double elapsed_s, uint64_t samples, uint64_t lost, char *buf,
			  size_t size)
{
	char n[32];
	char who[32];
	text_count(samples, n, sizeof(n));
	if (pid > 0)
		snprintf(who, sizeof(who), "pid %d", pid);
	else
		snprintf(who, sizeof(who), "the whole machine");
	snprintf(buf, size, "recording %s: %.0fs, %s samples, lost %llu", who, elapsed_s, n,
		 (unsigned long long)lost);
}
