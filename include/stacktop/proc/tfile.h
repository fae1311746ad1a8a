/*
 * tfile — files from a target's file system, opened safely.
 *
 * Every file whose path comes from a target (a mapped binary, a debug file
 * found by build-id or .gnu_debuglink, a perf map) is hostile: stacktop runs
 * as root, and the target controls what is at the path. A FIFO there would
 * block a reading open for good, a device node would run its driver's open
 * as root (closing /dev/watchdog arms a hardware watchdog), an absolute
 * symlink would lead to our own file system, a sparse file of terabytes
 * would be read or checksummed for minutes. So every such file is opened
 * here, one way:
 *
 *  1. The path is resolved with openat2(2) under a directory fd of the
 *     target's root (/proc/PID/root): RESOLVE_IN_ROOT keeps absolute
 *     symlinks and ".." inside that root, RESOLVE_NO_MAGICLINKS refuses
 *     /proc/.../fd links on the way. It is opened O_PATH, which runs no
 *     driver open and does not block on a FIFO.
 *  2. fstat of that O_PATH fd: only a regular file, at most the caller's
 *     size cap, goes on. Nothing else is ever opened for reading.
 *  3. The very same inode is reopened for reading through
 *     /proc/self/fd/N, O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC, and checked
 *     again (same device and inode, still regular).
 *
 * Where the kernel has no openat2 (before 5.6: ENOSYS), a target's root
 * cannot be entered safely: the open is refused (-ENOSYS, counted), never
 * done with a plain openat that would follow the target's symlinks out of
 * its root. Paths of our own file system (root fd TFILE_OWN_ROOT) fall back
 * to openat(O_PATH|O_NOFOLLOW) there, since no root is to be kept.
 *
 * /proc/PID/map_files/START-END (tfile_open_magic) is a magic link to the
 * exact mapped file; it is opened O_PATH (needs CAP_SYS_ADMIN, or
 * CAP_CHECKPOINT_RESTORE since 5.9) and goes through steps 2 and 3 too: a
 * target may map a device node executable.
 *
 * Size caps (bytes; the man page lists them):
 *   TFILE_ELF_MAX      4 GiB  a mapped ELF file or a debug file
 *   TFILE_CRC_MAX    256 MiB  a .gnu_debuglink candidate whose CRC32 must
 *                             be computed (one with the module's build-id
 *                             needs no CRC and only TFILE_ELF_MAX)
 *   TFILE_PERFMAP_MAX 64 MiB  a perf map file (/tmp/perf-PID.map)
 * A larger file is refused (-EFBIG, counted), never read in part.
 *
 * Files of the kernel's pseudo file systems (procfs, sysfs, debugfs,
 * tracefs, securityfs, cgroupfs, bpffs, configfs, efivarfs, pstore) are
 * regular files to fstat but not files: reading one runs kernel code, and
 * some are consumed by the read (/proc/kmsg). Every open here refuses them
 * (-EPERM, counted), whatever the path or a symlink said.
 *
 * A file read to show its text (annotate's source files) is opened with
 * tfile_open_for: besides the rules above, only when the credentials
 * given could read it by its mode bits (owner, group, other), so a target
 * whose line table names /etc/shadow does not get root to print it.
 *
 * Refusals are counted per reason in process-wide counters
 * (tfile_stats_get) so the header can say why a module has no names.
 * Nothing here prints. Thread safe (the counters are atomic).
 */
#ifndef STACKTOP_TFILE_H
#define STACKTOP_TFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define TFILE_ELF_MAX (4ull << 30)
#define TFILE_CRC_MAX (256ull << 20)
#define TFILE_PERFMAP_MAX (64ull << 20)

/* root fd meaning "our own file system": resolve from / as usual. */
#define TFILE_OWN_ROOT (-100) /* == AT_FDCWD */

/* tfile_open flags. */
enum {
	TFILE_NOFOLLOW = 1 << 0,    /* the last component must not be a symlink */
	TFILE_NO_SYMLINKS = 1 << 1, /* no symlink anywhere in the path */
};

/* Why a file was refused; counters index. */
enum tfile_reason {
	TFILE_R_NOT_REG = 0, /* FIFO, device, socket, directory */
	TFILE_R_TOO_BIG,     /* over the caller's size cap */
	TFILE_R_NO_OPENAT2,  /* kernel without openat2: root not enforceable */
	TFILE_R_IDENTITY,    /* not the file the target mapped (dev/inode differ) */
	TFILE_R_PSEUDO,	     /* on procfs, sysfs, debugfs and the like */
	TFILE_R_UNREADABLE,  /* its mode does not let the reader's credentials read it */
	TFILE_R_REMOTE,	     /* on FUSE or a network file system: not opened (mountinfo.h) */
	TFILE_R_COUNT
};

struct tfile_stats {
	uint64_t refused[TFILE_R_COUNT];
};

/* A directory fd (O_PATH) of the target's root, /proc/PID/root, for
 * tfile_open. fd or -errno (-ESRCH when the process is gone). */
int tfile_root_open(pid_t pid);
/* The same for a root given as a path ("/proc/PID/root", a test's fake
 * root); NULL or "" gives TFILE_OWN_ROOT. fd, TFILE_OWN_ROOT or -errno. */
int tfile_root_open_path(const char *root);
/* Close a root fd from the two above (TFILE_OWN_ROOT and <0 are ignored). */
void tfile_root_close(int rootfd);

/* Open path (absolute or relative, taken as under rootfd) for reading, the
 * safe way described above. max_size is the cap in bytes; st (may be NULL)
 * receives the file's stat. Returns an fd (O_RDONLY|O_NONBLOCK|O_CLOEXEC),
 * or -errno: -ENODEV not a regular file, -EFBIG over the cap, -ENOSYS no
 * openat2 for a target root, -ELOOP a symlink where flags forbid one, other
 * errors of the path (-ENOENT, -EACCES, -EXDEV for a magic link). */
int tfile_open(int rootfd, const char *path, unsigned flags, uint64_t max_size, struct stat *st);

/* tfile_open, never through a FUSE or network mount of the target
 * (mountinfo.h says why: a lookup there waits for a daemon the target may
 * be). mi is the mounts of the root's process (NULL or none remote: just
 * tfile_open). A path under a remote mount point is refused by its text;
 * a plain absolute path is then resolved with no symlink followed, so it
 * goes where its text says; one with a symlink (or "." or "..") on the
 * way is followed only while it crosses no mount at all (RESOLVE_NO_XDEV),
 * so a link into FUSE is never looked up in it. Refusals are -EREMOTE,
 * counted TFILE_R_REMOTE. */
struct mountinfo;
int tfile_open_local(int rootfd, const struct mountinfo *mi, const char *path, unsigned flags,
		     uint64_t max_size, struct stat *st);

/* tfile_open under a root given as a path (as tfile_root_open_path takes
 * it: "/proc/PID/root", a test's fake root, "" for our own), the root fd
 * opened and closed around it: for a lookup that is done once (a debug
 * file, a perf map re-check), not for many files of one target. */
int tfile_open_under(const char *root, const char *path, unsigned flags, uint64_t max_size,
		     struct stat *st);

/* A file a runtime writes for others to read (a perf map, a jitdump,
 * hsperfdata) under root as a path (NULL as ""): tfile_open_local with
 * root's mountinfo, no symlink as the file itself, and -EPERM unless uid
 * or root owns it (anyone may write a file of that name in /tmp). st is
 * required. fd or -errno. */
int tfile_open_owned(const char *root, const char *path, uid_t uid, uint64_t max_size,
		     struct stat *st);

/* Open a path we built ourselves, such as the magic link
 * /proc/PID/map_files/START-END, the same way but resolved as open(2) does
 * (symlinks and magic links followed, no root): O_PATH, regular files
 * only, max_size, reopened. fd or -errno. */
int tfile_open_magic(const char *path, uint64_t max_size, struct stat *st);

/* Whose eyes a file is read for: a uid and its groups (gid and up to
 * TFILE_GROUPS_MAX supplementary ones). */
#define TFILE_GROUPS_MAX 32
struct tfile_cred {
	uid_t uid;
	gid_t gid;
	gid_t groups[TFILE_GROUPS_MAX];
	int ngroups;
};

/* The text of /proc/PID/status (procfs, not a target's file) into buf,
 * NUL-terminated, cut at size - 1 bytes. Its length, or -errno (-ESRCH
 * when the process is gone). */
ssize_t tfile_read_status(pid_t pid, char *buf, size_t size);
/* The file-system credentials of a process (fsuid, fsgid, groups from
 * /proc/PID/status). 0 or -errno (-ESRCH gone, -EINVAL unparsable). */
int tfile_cred_of(pid_t pid, struct tfile_cred *out);
/* Parse the text of a /proc/PID/status file into *out. 0 or -EINVAL. */
int tfile_parse_cred(const char *status, struct tfile_cred *out);
/* Could cred read a file of this stat by its mode bits (owner, else
 * group, else other)? No capability is assumed: a file of mode 0000 is
 * readable by nobody, root's credentials included. */
bool tfile_readable_by(const struct stat *st, const struct tfile_cred *cred);
/* tfile_open_local, then refused (-EACCES, counted) unless cred could
 * read it. */
int tfile_open_for(int rootfd, const struct mountinfo *mi, const char *path,
		   const struct tfile_cred *cred, uint64_t max_size, struct stat *st);

/* Count a refusal found by a caller (e.g. an identity check). */
void tfile_count(enum tfile_reason r);
/* A snapshot of the refusal counters since start. */
void tfile_stats_get(struct tfile_stats *out);

#endif
