/*
 * mountinfo — remote (FUSE, network) mounts of a target (see mountinfo.h).
 *
 * A line of /proc/PID/mountinfo (proc(5)):
 *   36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw
 *   id parent maj:min root point options [optional...] - fstype source super
 * Paths escape space, tab, newline and backslash as \ooo.
 */
#include "stacktop/proc/mountinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/lib/array.h"

#define MOUNTINFO_MAX (16u << 20)

/* The next space-separated field of [*p, end): start and length. */
static bool next_field(const char **p, const char *end, const char **f, size_t *len)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s >= end)
		return false;
	*f = s;
	while (s < end && *s != ' ')
		s++;
	*len = (size_t)(s - *f);
	*p = s;
	return true;
}

/* A field with \ooo escapes decoded. */
static char *unescape(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*o++ =
			    (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
			continue;
		}
		*o++ = s[i];
	}
	*o = '\0';
	return out;
}

/* One line into *e (strings malloc'ed). 0, -EINVAL (malformed), -ENOMEM. */
static int parse_line(const char *p, const char *end, struct mountinfo_entry *e)
{
	const char *f, *point = NULL, *type = NULL;
	size_t len, point_len = 0, type_len = 0;
	unsigned maj, min;
	char dev[32];
	int i;

	for (i = 0; next_field(&p, end, &f, &len); i++) {
		if (i == 2) {
			if (len >= sizeof(dev))
				return -EINVAL;
			memcpy(dev, f, len);
			dev[len] = '\0';
			if (sscanf(dev, "%u:%u", &maj, &min) != 2)
				return -EINVAL;
		} else if (i == 4) {
			point = f;
			point_len = len;
		} else if (i > 5 && len == 1 && *f == '-') {
			if (!next_field(&p, end, &type, &type_len))
				return -EINVAL;
			break;
		}
	}
	if (!point || !type)
		return -EINVAL;
	e->major = maj;
	e->minor = min;
	e->point = unescape(point, point_len);
	e->fstype = strndup(type, type_len);
	if (!e->point || !e->fstype) {
		free(e->point);
		free(e->fstype);
		return -ENOMEM;
	}
	return 0;
}

int mountinfo_parse(const char *text, struct mountinfo *out)
{
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	while (text && *text) {
		const char *eol = strchrnul(text, '\n');
		struct mountinfo_entry e;
		int err = parse_line(text, eol, &e);

		if (err == -ENOMEM)
			goto nomem;
		if (err == 0) {
			if (array_grow((void **)&out->e, &cap, out->n + 1, sizeof(*out->e))) {
				free(e.point);
				free(e.fstype);
				goto nomem;
			}
			out->e[out->n++] = e;
		}
		text = *eol ? eol + 1 : eol;
	}
	return 0;
nomem:
	mountinfo_free(out);
	return -ENOMEM;
}

static int read_all(const char *path, char **out)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		free(buf);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb = cap >= MOUNTINFO_MAX ? NULL : realloc(buf, cap * 2 + 1);

			if (!nb) {
				err = cap >= MOUNTINFO_MAX ? -EFBIG : -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int mountinfo_load(pid_t pid, struct mountinfo *out)
{
	char path[64], *text = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	if ((err = read_all(path, &text)))
		return err;
	err = mountinfo_parse(text, out);
	free(text);
	return err;
}

int mountinfo_load_for_root(const char *root, struct mountinfo *out)
{
	int pid, n = 0;

	memset(out, 0, sizeof(*out));
	if (!root || !root[0])
		return mountinfo_load(0, out);
	if (sscanf(root, "/proc/%d/root%n", &pid, &n) == 1 && n > 0 && root[n] == '\0' && pid > 0)
		return mountinfo_load(pid, out);
	return -ENOENT;
}

void mountinfo_free(struct mountinfo *mi)
{
	for (size_t i = 0; i < mi->n; i++) {
		free(mi->e[i].point);
		free(mi->e[i].fstype);
	}
	free(mi->e);
	mi->e = NULL;
	mi->n = 0;
}

bool mountinfo_type_remote(const char *t)
{
	static const char *const remote[] = {
	    "fuse",   "fuseblk", "nfs",	      "nfs4", "cifs",  "smb3",
	    "smbfs",  "9p",	 "ceph",      "afs",  "coda",  "ncpfs",
	    "lustre", "davfs",	 "glusterfs", "gfs2", "ocfs2", "orangefs",
	};

	if (!t)
		return false;
	if (!strncmp(t, "fuse.", 5))
		return true;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if (!strcmp(t, remote[i]))
			return true;
	return false;
}

const char *mountinfo_dev_remote(const struct mountinfo *mi, unsigned major, unsigned minor)
{
	for (size_t i = 0; mi && i < mi->n; i++)
		if (mi->e[i].major == major && mi->e[i].minor == minor &&
		    mountinfo_type_remote(mi->e[i].fstype))
			return mi->e[i].fstype;
	return NULL;
}

/* Is point the path itself or one of its directories? */
static bool under(const char *path, const char *point)
{
	size_t n = strlen(point);

	if (n == 1 && point[0] == '/')
		return true;
	return !strncmp(path, point, n) && (path[n] == '\0' || path[n] == '/');
}

const char *mountinfo_path_remote(const struct mountinfo *mi, const char *path)
{
	for (size_t i = 0; mi && path && i < mi->n; i++)
		if (mountinfo_type_remote(mi->e[i].fstype) && under(path, mi->e[i].point))
			return mi->e[i].fstype;
	return NULL;
}
