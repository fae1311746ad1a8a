/*
 * tfile — files from a target's file system, opened safely (the rules and
 * the size caps are in tfile.h).
 *
 * Why O_PATH first: open(2) of a FIFO for reading blocks until a writer
 * comes (O_NONBLOCK avoids that, but still opens it), and open of a device
 * node calls its driver's open as root. An O_PATH fd does neither
 * (open(2): "the file itself is not opened"), yet fstat works on it, so the
 * type and size are known before any real open. Reopening through
 * /proc/self/fd/N opens the inode the O_PATH fd holds, not whatever is at
 * the path by then, so a swap between the check and the open changes
 * nothing.
 *
 * openat2 with RESOLVE_IN_ROOT (Linux 5.6, openat2(2)) treats the dirfd as
 * the root for absolute symlinks and "..", which a plain open of
 * "/proc/PID/root/PATH" does not: there an absolute symlink planted by the
 * target resolves against our root, the host's.
 */
#include "stacktop/proc/tfile.h"
#include "stacktop/proc/mountinfo.h"
#include "stacktop/lib/fdread.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REOPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static _Atomic uint64_t refused[TFILE_R_COUNT];

void tfile_count(enum tfile_reason r)
{
	if ((unsigned)r < TFILE_R_COUNT)
		atomic_fetch_add_explicit(&refused[r], 1, memory_order_relaxed);
}

void tfile_stats_get(struct tfile_stats *out)
{
	for (int i = 0; i < TFILE_R_COUNT; i++)
		out->refused[i] = atomic_load_explicit(&refused[i], memory_order_relaxed);
}

int tfile_root_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

int tfile_root_open_path(const char *root)
{
	if (!root || !root[0])
		return TFILE_OWN_ROOT;
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void tfile_root_close(int rootfd)
{
	if (rootfd >= 0)
		close(rootfd);
}

/* Is fd on one of the kernel's pseudo file systems? An fs that fstatfs
 * cannot name is taken as one. */
static bool on_pseudo_fs(int fd)
{
	static const unsigned long magics[] = {
	    PROC_SUPER_MAGIC,	       SYSFS_MAGIC,	   DEBUGFS_MAGIC,	TRACEFS_MAGIC,
	    SECURITYFS_MAGIC,	       CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,
	    0x62656570 /* configfs */, EFIVARFS_MAGIC,	   PSTOREFS_MAGIC,
	};
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return true;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if ((unsigned long)sf.f_type == magics[i])
			return true;
	return false;
}

/* Step 2 and 3: the O_PATH fd (consumed) checked, then reopened for
 * reading. */
static int check_and_reopen(int pfd, uint64_t max_size, struct stat *out)
{
	struct stat st, st2;
	char self[64];
	int fd, err;

	if (fstat(pfd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (S_ISLNK(st.st_mode)) {
		err = -ELOOP;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		tfile_count(TFILE_R_NOT_REG);
		err = -ENODEV;
		goto fail;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > max_size) {
		tfile_count(TFILE_R_TOO_BIG);
		err = -EFBIG;
		goto fail;
	}
	if (on_pseudo_fs(pfd)) {
		tfile_count(TFILE_R_PSEUDO);
		err = -EPERM;
		goto fail;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, REOPEN_FLAGS);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	close(pfd);
	/* The magic link cannot lead elsewhere; checked anyway, it is cheap. */
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_dev != st.st_dev ||
	    st2.st_ino != st.st_ino) {
		close(fd);
		tfile_count(TFILE_R_IDENTITY);
		return -ESTALE;
	}
	if (out)
		*out = st2;
	return fd;
fail:
	close(pfd);
	return err;
}

/* tfile_open with more RESOLVE_ flags (extra). */
static int open_resolved(int rootfd, const char *path, unsigned flags, uint64_t extra,
			 uint64_t max_size, struct stat *st)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_NO_MAGICLINKS | extra};
	int pfd;

	if (!path || !path[0] || (rootfd < 0 && rootfd != TFILE_OWN_ROOT))
		return -EINVAL;
	if (flags & TFILE_NOFOLLOW)
		how.flags |= O_NOFOLLOW;
	if (flags & TFILE_NO_SYMLINKS)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	if (rootfd != TFILE_OWN_ROOT)
		how.resolve |= RESOLVE_IN_ROOT;
	pfd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (pfd < 0 && (errno == ENOSYS || errno == E2BIG)) {
		if (rootfd != TFILE_OWN_ROOT || extra) {
			/* A plain openat would follow the target's absolute
			 * symlinks into our own root (or any symlink into a
			 * remote mount, which extra's flags keep out). */
			tfile_count(TFILE_R_NO_OPENAT2);
			return -ENOSYS;
		}
		pfd = openat(AT_FDCWD, path, (int)how.flags);
	}
	if (pfd < 0)
		return -errno;
	return check_and_reopen(pfd, max_size, st);
}

int tfile_open(int rootfd, const char *path, unsigned flags, uint64_t max_size, struct stat *st)
{
	return open_resolved(rootfd, path, flags, 0, max_size, st);
}

/* Absolute, and every component a name (no "", ".", ".."): resolved
 * without symlinks, it goes where its text says. */
static bool path_plain(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *c = path + 1;;) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

static bool any_remote(const struct mountinfo *mi)
{
	for (size_t i = 0; mi && i < mi->n; i++)
		if (mountinfo_type_remote(mi->e[i].fstype))
			return true;
	return false;
}

static int refuse_remote(void)
{
	tfile_count(TFILE_R_REMOTE);
	return -EREMOTE;
}

int tfile_open_local(int rootfd, const struct mountinfo *mi, const char *path, unsigned flags,
		     uint64_t max_size, struct stat *st)
{
	int fd;

	if (!any_remote(mi) || !path)
		return tfile_open(rootfd, path, flags, max_size, st);
	if (mountinfo_path_remote(mi, path))
		return refuse_remote();
	/* 1. Where the text says, no symlink followed: its text was checked. */
	if (path_plain(path)) {
		fd = open_resolved(rootfd, path, flags, RESOLVE_NO_SYMLINKS, max_size, st);
		if (fd != -ELOOP)
			return fd;
	}
	/* 2. A symlink (or "..") on the way leads anywhere: followed only
	 * while no mount is crossed, so never into a FUSE or network mount
	 * whatever the links say (a link to another local mount is refused
	 * too: names lost, never a hang). */
	fd = open_resolved(rootfd, path, flags, RESOLVE_NO_XDEV, max_size, st);
	return fd == -EXDEV ? refuse_remote() : fd;
}

int tfile_open_under(const char *root, const char *path, unsigned flags, uint64_t max_size,
		     struct stat *st)
{
	int rootfd = tfile_root_open_path(root), fd;

	if (rootfd < 0 && rootfd != TFILE_OWN_ROOT)
		return rootfd;
	fd = tfile_open(rootfd, path, flags, max_size, st);
	tfile_root_close(rootfd);
	return fd;
}

int tfile_open_owned(const char *root, const char *path, uid_t uid, uint64_t max_size,
		     struct stat *st)
{
	int rootfd = tfile_root_open_path(root ? root : ""), fd;
	struct mountinfo mi;

	if (rootfd < 0 && rootfd != TFILE_OWN_ROOT)
		return rootfd;
	mountinfo_load_for_root(root ? root : "", &mi);
	fd = tfile_open_local(rootfd, &mi, path, TFILE_NOFOLLOW, max_size, st);
	mountinfo_free(&mi);
	tfile_root_close(rootfd);
	if (fd >= 0 && st->st_uid != 0 && st->st_uid != uid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int tfile_open_magic(const char *path, uint64_t max_size, struct stat *st)
{
	int pfd;

	if (!path)
		return -EINVAL;
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	return check_and_reopen(pfd, max_size, st);
}

/* "Uid:\treal\teffective\tsaved\tfs" → the fourth number (the one the
 * kernel checks file access with). */
static int status_field4(const char *line, unsigned long *out)
{
	unsigned long v[4];

	if (sscanf(line, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EINVAL;
	*out = v[3];
	return 0;
}

int tfile_parse_cred(const char *status, struct tfile_cred *out)
{
	bool have_uid = false, have_gid = false;
	unsigned long v;

	memset(out, 0, sizeof(*out));
	for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, "Uid:", 4) && !status_field4(l + 4, &v)) {
			out->uid = (uid_t)v;
			have_uid = true;
		} else if (!strncmp(l, "Gid:", 4) && !status_field4(l + 4, &v)) {
			out->gid = (gid_t)v;
			have_gid = true;
		} else if (!strncmp(l, "Groups:", 7)) {
			const char *p = l + 7;
			char *end;

			while (out->ngroups < TFILE_GROUPS_MAX) {
				v = strtoul(p, &end, 10);
				if (end == p ||
				    (*end && *end != ' ' && *end != '\t' && *end != '\n'))
					break;
				out->groups[out->ngroups++] = (gid_t)v;
				p = end;
			}
		}
	}
	return have_uid && have_gid ? 0 : -EINVAL;
}

ssize_t tfile_read_status(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (size == 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = fdread_at(fd, buf, size - 1, 0);
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

int tfile_cred_of(pid_t pid, struct tfile_cred *out)
{
	char buf[4096];
	ssize_t n = tfile_read_status(pid, buf, sizeof(buf));

	return n < 0 ? (int)n : tfile_parse_cred(buf, out);
}

bool tfile_readable_by(const struct stat *st, const struct tfile_cred *cred)
{
	bool in_group = st->st_gid == cred->gid;

	if (st->st_uid == cred->uid)
		return st->st_mode & S_IRUSR;
	for (int i = 0; !in_group && i < cred->ngroups; i++)
		in_group = st->st_gid == cred->groups[i];
	if (in_group)
		return st->st_mode & S_IRGRP;
	return st->st_mode & S_IROTH;
}

int tfile_open_for(int rootfd, const struct mountinfo *mi, const char *path,
		   const struct tfile_cred *cred, uint64_t max_size, struct stat *st)
{
	struct stat sb;
	int fd = tfile_open_local(rootfd, mi, path, 0, max_size, &sb);

	if (fd < 0)
		return fd;
	if (!tfile_readable_by(&sb, cred)) {
		close(fd);
		tfile_count(TFILE_R_UNREADABLE);
		return -EACCES;
	}
	if (st)
		*st = sb;
	return fd;
}
