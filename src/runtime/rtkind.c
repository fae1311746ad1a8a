/*
 * rtkind — which runtime a process is (see rtkind.h).
 */
#include "stacktop/runtime/rtkind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/runtime/jvmattach.h"
#include "stacktop/lib/fdread.h"

/* The base name of a maps line's path ("" for none): after its last '/'. */
static const char *line_base(const char *line, const char *end, size_t *len)
{
	const char *slash = NULL;

	for (const char *p = line; p < end; p++)
		if (*p == '/')
			slash = p;
	if (!slash)
		return *len = 0, "";
	*len = (size_t)(end - slash - 1);
	return slash + 1;
}

/* "python3.12", "libpython3.12.so.1.0": the minor after "python3.". */
static bool python_minor(const char *b, size_t n, int *minor)
{
	size_t k = !strncmp(b, "lib", n < 3 ? n : 3) && n > 3 ? 3 : 0;

	if (n - k < 9 || memcmp(b + k, "python3.", 8))
		return false;
	int m = 0, digits = 0;
	for (size_t i = k + 8; i < n && b[i] >= '0' && b[i] <= '9' && digits < 3; i++, digits++)
		m = m * 10 + (b[i] - '0');
	if (!digits)
		return false;
	*minor = m;
	return true;
}

enum rtkind rtkind_of_maps(const char *maps, size_t len, int *py_minor)
{
	enum rtkind k = RTKIND_NONE;

	*py_minor = 0;
	if (jvmattach_maps_hotspot(maps, len))
		return RTKIND_HOTSPOT;
	for (const char *p = maps, *end = maps + len; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		const char *le = e ? e : end;
		size_t n;
		const char *b = line_base(p, le, &n);

		if ((n == 4 && !memcmp(b, "node", 4)) || (n == 6 && !memcmp(b, "nodejs", 6)) ||
		    (n >= 10 && !memcmp(b, "libnode.so", 10)))
			k = RTKIND_NODE;
		else if (k == RTKIND_NONE && python_minor(b, n, py_minor))
			k = RTKIND_PYTHON;
		p = le + 1;
	}
	return k;
}

int rtkind_of(pid_t pid, int *py_minor)
{
	char path[64];
	size_t len = 0;
	char *buf = NULL;
	int fd, rc;

	*py_minor = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	rc = fdread_all(fd, RTKIND_MAPS_MAX, 0, &buf, &len);
	close(fd);
	if (rc == 0 || rc == -EFBIG) /* past the cap: its first RTKIND_MAPS_MAX */
		rc = (int)rtkind_of_maps(buf, len, py_minor);
	free(buf);
	return rc;
}
