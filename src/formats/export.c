/*
 * export — pick the writer of the format, build the file in memory, put it
 * on an fd or on disk (see export.h).
 *
 * Contract: export_render builds the whole file in one malloc'd buffer
 * (the caller frees), export_write_fd writes that buffer, and export_write
 * puts it on disk through atomicfile. The window is only read.
 */
#include "stacktop/formats/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/formats/atomicfile.h"
#include "stacktop/formats/folded.h"
#include "stacktop/formats/pprof.h"
#include "stacktop/formats/selection.h"
#include "stacktop/formats/speedscope.h"
#include "stacktop/lib/sbuf.h"
#include "stacktop/lib/text.h"

/* ---- formats ---- */

/* Each enum export_format's table. */
static const struct format_ops *const formats[] = {
    [EXPORT_FOLDED] = &folded_format,
    [EXPORT_PPROF] = &pprof_format,
    [EXPORT_SPEEDSCOPE] = &speedscope_format,
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

int export_format_parse(const char *name, enum export_format *out)
{
	for (size_t i = 0; name && i < NFORMATS; i++)
		if (!strcmp(name, formats[i]->name)) {
			*out = (enum export_format)i;
			return 0;
		}
	return -EINVAL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && !strcmp(s + n - m, suffix);
}

int export_format_from_path(const char *path, enum export_format *out)
{
	if (!path)
		return -EINVAL;
	for (size_t i = 0; i < NFORMATS; i++)
		for (const char *const *s = formats[i]->suffixes; *s; s++)
			if (ends_with(path, *s)) {
				*out = (enum export_format)i;
				return 0;
			}
	return -EINVAL;
}

const char *export_format_ext(enum export_format f)
{
	return (size_t)f < NFORMATS ? formats[f]->ext : "";
}

/* ---- entry points ---- */

int export_render(struct window *w, const struct export_opts *o, char **buf, size_t *len, char *err,
		  size_t errsz)
{
	struct sbuf out = {0};
	struct selection s;
	int rc;

	*buf = NULL;
	*len = 0;
	if (!w || !o) {
		text_errf(err, errsz, "nothing to export.");
		return -EINVAL;
	}
	rc = selection_build(&s, w, o);
	if (!rc)
		rc = (size_t)o->format < NFORMATS ? formats[o->format]->render(w, o, &s, &out)
						  : -EINVAL;
	selection_free(&s);
	if (!rc && out.oom)
		rc = -ENOMEM;
	if (rc) {
		free(out.p);
		text_errf(err, errsz, "cannot build the profile: %s.", strerror(-rc));
		return rc;
	}
	if (!out.p && !(out.p = calloc(1, 1))) {
		text_errf(err, errsz, "cannot build the profile: %s.", strerror(ENOMEM));
		return -ENOMEM;
	}
	*buf = out.p;
	*len = out.n;
	return 0;
}

int export_write_fd(struct window *w, const struct export_opts *o, int fd, char *err, size_t errsz)
{
	char *buf;
	size_t len;
	int rc = export_render(w, o, &buf, &len, err, errsz);

	if (rc)
		return rc;
	if ((rc = atomicfile_write_all(fd, buf, len)))
		text_errf(err, errsz, "cannot write the profile: %s.", strerror(-rc));
	free(buf);
	return rc;
}

int export_write(struct window *w, const struct export_opts *o, const char *path, char *err,
		 size_t errsz)
{
	char *buf = NULL;
	size_t len;
	int rc;

	if ((rc = atomicfile_check(path, o->force, err, errsz)) ||
	    (rc = export_render(w, o, &buf, &len, err, errsz)))
		return rc;
	rc = atomicfile_write(path, buf, len, o->force, o->file_mode, err, errsz);
	free(buf);
	return rc;
}
