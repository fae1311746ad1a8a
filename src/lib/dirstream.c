/*
 * dirstream — a directory read with getdents64 (see dirstream.h).
 */
#include "stacktop/lib/dirstream.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

void dirstream_init(struct dirstream *ds)
{
	ds->fd = -1;
	dirstream_rewind(ds);
}

void dirstream_rewind(struct dirstream *ds)
{
	ds->pos = ds->len = 0;
}

void dirstream_close(struct dirstream *ds)
{
	if (ds->fd >= 0)
		close(ds->fd);
	dirstream_init(ds);
}

const struct dirent64 *dirstream_next(struct dirstream *ds)
{
	if (ds->pos >= ds->len) {
		long n = syscall(SYS_getdents64, ds->fd, ds->buf, ds->size);

		if (n <= 0)
			return NULL;
		ds->len = (size_t)n;
		ds->pos = 0;
	}
	const struct dirent64 *e = (const struct dirent64 *)(ds->buf + ds->pos);
	ds->pos += e->d_reclen;
	return e;
}

pid_t dirstream_pid(const char *s)
{
	long v = 0;

	if (*s < '1' || *s > '9')
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > INT32_MAX / 10)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v <= INT32_MAX ? (pid_t)v : 0;
}
