/*
 * atomicfile — write a whole file or nothing (see atomicfile.h).
 *
 * renameat2 needs Linux 3.15 and is not on every file system; where it is
 * refused with EINVAL or ENOSYS, link(2) does the no-overwrite step (it too
 * fails with EEXIST) and the temporary name is unlinked after.
 */
#include "stacktop/formats/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacktop/lib/text.h"

int atomicfile_check(const char *path, bool force, char *err, size_t errsz)
{
	struct stat st;

	if (!path || !*path) {
		text_errf(err, errsz, "no output file given.");
		return -EINVAL;
	}
	if (lstat(path, &st) != 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		text_errf(err, errsz, "%s is a symbolic link; not writing through it.", path);
		return -ELOOP;
	}
	if (!force) {
		text_errf(err, errsz, "%s exists; use --force to overwrite it.", path);
		return -EEXIST;
	}
	if (!S_ISREG(st.st_mode)) {
		text_errf(err, errsz, "%s is not a regular file; not replacing it.", path);
		return -EINVAL;
	}
	return 0;
}

int atomicfile_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Put the temporary file at path without replacing anything; -EEXIST. */
static int link_noreplace(const char *tmp, const char *path)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (link(tmp, path) != 0)
		return -errno;
	unlink(tmp);
	return 0;
}

/* "DIR/.stacktop-XXXXXX" for path's directory (malloc'd), or NULL. The
 * temporary file sits in the target's directory, so rename is atomic and a
 * full or read-only file system shows up before anything is replaced. */
static char *temp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *t = NULL;
	int dl = slash ? (int)(slash - path) : 0;

	if (asprintf(&t, "%.*s/.stacktop-XXXXXX", slash ? (dl ? dl : 1) : 1,
		     slash ? (dl ? path : "/") : ".") < 0)
		return NULL;
	return t;
}

int atomicfile_write(const char *path, const char *buf, size_t len, bool force, unsigned mode,
		     char *err, size_t errsz)
{
	char *tmp = temp_name(path);
	int fd, rc;

	if (!tmp) {
		text_errf(err, errsz, "cannot write %s: %s.", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		rc = -errno;
		text_errf(err, errsz, "cannot create %s: %s.", path, strerror(-rc));
		free(tmp);
		return rc;
	}
	rc = fchmod(fd, mode ? mode : 0600) ? -errno : 0;
	if (!rc)
		rc = atomicfile_write_all(fd, buf, len);
	if (close(fd) && !rc)
		rc = -errno;
	if (rc) {
		text_errf(err, errsz, "cannot write %s: %s.", path, strerror(-rc));
	} else {
		rc = force ? (rename(tmp, path) ? -errno : 0) : link_noreplace(tmp, path);
		if (rc == -EEXIST)
			text_errf(err, errsz, "%s exists; use --force to overwrite it.", path);
		else if (rc)
			text_errf(err, errsz, "cannot write %s: %s.", path, strerror(-rc));
	}
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}
