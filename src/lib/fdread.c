#include "stacktop/lib/fdread.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

ssize_t fdread_at(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int fdread_all(int fd, size_t max, size_t hint, char **buf, size_t *len)
{
	size_t cap = hint ? hint + 1 : 65536, n = 0;
	char *b = NULL, *p;
	int rc = 0;

	*buf = NULL;
	*len = 0;
	if (hint > max)
		return -EFBIG;
	if (cap > max + 1)
		cap = max + 1; /* one byte past max says there is more */
	for (;;) {
		ssize_t k;

		if (!b || n == cap) {
			if (b)
				cap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
			if (!(p = realloc(b, cap))) {
				free(b);
				return -ENOMEM;
			}
			b = p;
		}
		k = read(fd, b + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			free(b);
			return rc;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > max) {
			n = max;
			rc = -EFBIG;
			break;
		}
	}
	*buf = b;
	*len = n;
	return rc;
}
