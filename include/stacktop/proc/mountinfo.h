/*
 * mountinfo — which of a target's files live on a file system whose
 * reads someone else answers (FUSE, network), from /proc/PID/mountinfo.
 *
 * Why: a FUSE daemon may be the target itself (or its accomplice). An
 * open, fstat or read of a file on its mount waits for the daemon's
 * answer, and a daemon that never answers blocks the reader for good,
 * signals or not. A network file system can do the same when its server
 * stops answering. stacktop opens none of those files: a mapping whose
 * device (major:minor, as /proc/PID/maps shows it) is a mount of such a
 * type gets a module with no names (counted as TFILE_R_REMOTE, shown in
 * the help's symbol list), and a debug file, perf map or source file is
 * opened through tfile_open_local, which looks up no path under such a
 * mount point and follows a symlink only within one mount.
 *
 * Remote types: "fuse", "fuseblk", every "fuse.*" (sshfs, gvfsd-fuse,
 * rclone, ...), nfs, nfs4, cifs, smb3, smbfs, 9p, ceph, afs, coda,
 * ncpfs, lustre, davfs, glusterfs, gfs2, ocfs2, orangefs.
 *
 * Contract: mountinfo_parse is pure (text in, a struct mountinfo out that
 * owns its strings; free with mountinfo_free). mountinfo_load reads a
 * process's file (the kernel writes it; no target file is read). A
 * zeroed struct mountinfo is empty and valid. Nothing prints.
 */
#ifndef STACKTOP_MOUNTINFO_H
#define STACKTOP_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mountinfo_entry {
	unsigned major, minor;
	char *point;  /* mount point, as the process sees it (unescaped) */
	char *fstype; /* "ext4", "fuse.sshfs" */
};

struct mountinfo {
	struct mountinfo_entry *e;
	size_t n;
};

/* Parse mountinfo text; malformed lines are skipped. 0 or -ENOMEM. */
int mountinfo_parse(const char *text, struct mountinfo *out);
/* /proc/PID/mountinfo (pid 0: our own). 0 or -errno. */
int mountinfo_load(pid_t pid, struct mountinfo *out);
/* The same for a root given as tfile's root paths are: "" is our own,
 * "/proc/PID/root" that process's; anything else (a test's fake root)
 * leaves *out empty and returns -ENOENT. */
int mountinfo_load_for_root(const char *root, struct mountinfo *out);
void mountinfo_free(struct mountinfo *mi);

/* Is this file system type one whose reads may never return? */
bool mountinfo_type_remote(const char *fstype);
/* The remote type of device major:minor, or NULL (local, or not listed). */
const char *mountinfo_dev_remote(const struct mountinfo *mi, unsigned major, unsigned minor);
/* The remote type of the mount an absolute path would be looked up
 * through (any remote mount point that is the path or one of its
 * directories), or NULL. By the path's text: a symlink on the way is not
 * followed here. */
const char *mountinfo_path_remote(const struct mountinfo *mi, const char *path);

#endif
