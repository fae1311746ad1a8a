/*
 * test_tfile — files from a target's file system: a FIFO is never opened
 * for reading (a writer blocked on it stays blocked), a device node is
 * refused, symlinks and ".." stay inside a fake root, a sparse file over
 * the cap is refused by its size, a kernel without openat2 (faked with
 * seccomp) makes a target root refused, not followed blindly, and
 * tfile_open_local never looks a path up through a remote mount, by its
 * text or through a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/mountinfo.h"
#include "stacktop/proc/tfile.h"
#include "helpers.h"

struct fake_root {
	char dir[32];
	int fd;
};

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	assert_int_equal(system(cmd), 0);
}

static void root_make(struct fake_root *r)
{
	strcpy(r->dir, "/tmp/tfile-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	r->fd = tfile_root_open_path(r->dir);
	assert_true(r->fd >= 0);
}

static void root_drop(struct fake_root *r)
{
	tfile_root_close(r->fd);
	sh("rm -rf '%s'", r->dir);
}

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	put_text(path, "w", text);
}

static void assert_reads(int fd, const char *want)
{
	char buf[64] = {0};

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, sizeof(buf) - 1, 0), (ssize_t)strlen(want));
	assert_string_equal(buf, want);
	close(fd);
}

static uint64_t refused(enum tfile_reason r)
{
	struct tfile_stats st;

	tfile_stats_get(&st);
	return st.refused[r];
}

static void test_regular(void **state)
{
	struct fake_root r;
	struct stat st;
	int fd;

	root_make(&r);
	put_file(r.dir, "a", "hello\n");
	fd = tfile_open(r.fd, "/a", 0, 100, &st);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 6);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_reads(fd, "hello\n");
	assert_reads(tfile_open(r.fd, "a", 0, 6, NULL), "hello\n"); /* at the cap */
	root_drop(&r);
}

/* A FIFO: refused, without blocking, and never opened for reading: a
 * writer blocked in open(O_WRONLY) would be let through by any reader. */
static void test_fifo(void **state)
{
	char path[128];
	struct fake_root r;
	uint64_t before = refused(TFILE_R_NOT_REG);
	pid_t writer;
	int status;

	root_make(&r);
	snprintf(path, sizeof(path), "%s/fifo", r.dir);
	assert_int_equal(mkfifo(path, 0666), 0);
	writer = fork();
	if (writer == 0) {
		alarm(10);
		_exit(open(path, O_WRONLY) >= 0 ? 0 : 1);
	}
	usleep(100 * 1000);
	alarm(5); /* a blocking open would end the test here */
	assert_int_equal(tfile_open(r.fd, "/fifo", 0, 1 << 20, NULL), -ENODEV);
	assert_int_equal(tfile_open_magic(path, 1 << 20, NULL), -ENODEV);
	alarm(0);
	usleep(100 * 1000);
	assert_int_equal(waitpid(writer, &status, WNOHANG), 0); /* still blocked */
	kill(writer, SIGKILL);
	waitpid(writer, &status, 0);
	assert_int_equal(refused(TFILE_R_NOT_REG), before + 2);
	root_drop(&r);
}

/* Device nodes are never opened: /dev/null itself, a node made inside the
 * root, and an absolute symlink to /dev/null (which stays in the root). */
static void test_device(void **state)
{
	char path[128];
	struct fake_root r;

	root_make(&r);
	assert_int_equal(tfile_open(TFILE_OWN_ROOT, "/dev/null", 0, 1 << 20, NULL), -ENODEV);
	assert_int_equal(tfile_open_magic("/dev/null", 1 << 20, NULL), -ENODEV);
	assert_int_equal(tfile_open(TFILE_OWN_ROOT, "/dev", 0, 1 << 20, NULL), -ENODEV);
	snprintf(path, sizeof(path), "%s/null", r.dir);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0)
		assert_int_equal(tfile_open(r.fd, "/null", 0, 1 << 20, NULL), -ENODEV);
	snprintf(path, sizeof(path), "%s/devnull", r.dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	assert_int_equal(tfile_open(r.fd, "/devnull", 0, 1 << 20, NULL), -ENOENT);
	root_drop(&r);
}

/* Absolute symlinks and ".." resolve inside the root, never to the same
 * path in ours; the flags refuse symlinks; magic links are refused. */
static void test_symlinks_stay_in_root(void **state)
{
	char outside[] = "/tmp/tfile-out-XXXXXX", path[256], inside[256];
	struct fake_root r;

	root_make(&r);
	assert_non_null(mkdtemp(outside));
	put_file(outside, "secret", "outside\n");
	/* ROOT/<outside>/secret is the file the root holds at that path. */
	snprintf(inside, sizeof(inside), "%s%s", r.dir, outside);
	sh("mkdir -p '%s'", inside);
	put_file(inside, "secret", "inside\n");
	snprintf(path, sizeof(path), "%s/link", r.dir);
	snprintf(inside, sizeof(inside), "%s/secret", outside);
	assert_int_equal(symlink(inside, path), 0);
	assert_reads(tfile_open(r.fd, "/link", 0, 100, NULL), "inside\n");
	/* ".." cannot climb out of the root. */
	snprintf(path, sizeof(path), "%s/up", r.dir);
	snprintf(inside, sizeof(inside), "../../../../../..%s/secret", outside);
	assert_int_equal(symlink(inside, path), 0);
	assert_reads(tfile_open(r.fd, "/up", 0, 100, NULL), "inside\n");
	assert_reads(tfile_open(r.fd, inside, 0, 100, NULL), "inside\n");
	/* Without a root the same link leads out (our own file system). */
	snprintf(path, sizeof(path), "%s/link", r.dir);
	assert_reads(tfile_open(TFILE_OWN_ROOT, path, 0, 100, NULL), "outside\n");
	/* Flags: no symlink as the last component, or anywhere. */
	assert_int_equal(tfile_open(r.fd, "/link", TFILE_NOFOLLOW, 100, NULL), -ELOOP);
	assert_int_equal(tfile_open(r.fd, "/link", TFILE_NO_SYMLINKS, 100, NULL), -ELOOP);
	snprintf(path, sizeof(path), "%s/dirlink", r.dir);
	assert_int_equal(symlink(outside + 1, path), 0); /* "tmp/tfile-out-..." */
	assert_reads(tfile_open(r.fd, "/dirlink/secret", TFILE_NOFOLLOW, 100, NULL), "inside\n");
	assert_int_equal(tfile_open(r.fd, "/dirlink/secret", TFILE_NO_SYMLINKS, 100, NULL), -ELOOP);
	/* /proc/self/exe is a magic link: not through tfile_open. */
	assert_int_equal(tfile_open(TFILE_OWN_ROOT, "/proc/self/exe", 0, 1ull << 40, NULL), -ELOOP);
	root_drop(&r);
	sh("rm -rf '%s'", outside);
}

/* Over the cap: refused by the size fstat gives, nothing read. A sparse
 * 4 GiB file costs no disk. */
static void test_size_cap(void **state)
{
	char path[128];
	struct fake_root r;
	uint64_t before = refused(TFILE_R_TOO_BIG);
	int fd;

	root_make(&r);
	snprintf(path, sizeof(path), "%s/sparse", r.dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(4ull << 30)), 0);
	close(fd);
	assert_int_equal(tfile_open(r.fd, "/sparse", 0, TFILE_CRC_MAX, NULL), -EFBIG);
	assert_int_equal(tfile_open(r.fd, "/sparse", 0, (4ull << 30) - 1, NULL), -EFBIG);
	assert_int_equal(refused(TFILE_R_TOO_BIG), before + 2);
	fd = tfile_open(r.fd, "/sparse", 0, 4ull << 30, NULL);
	assert_true(fd >= 0);
	close(fd);
	root_drop(&r);
}

/* The exact mapped file through /proc/self/map_files (needs CAP_SYS_ADMIN
 * or CAP_CHECKPOINT_RESTORE; skipped without). */
static void test_magic_map_files(void **state)
{
	uintptr_t pc = (uintptr_t)&test_magic_map_files;
	char line[512], path[128] = "";
	struct stat st, want;
	FILE *f = fopen("/proc/self/maps", "r");
	int fd;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a <= pc && pc < b) {
			snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", a, b);
			break;
		}
	}
	fclose(f);
	assert_true(path[0]);
	fd = tfile_open_magic(path, 1ull << 32, &st);
	if (fd == -EPERM)
		skip();
	assert_true(fd >= 0);
	assert_int_equal(stat("/proc/self/exe", &want), 0);
	assert_int_equal(st.st_ino, want.st_ino);
	assert_int_equal(st.st_dev, want.st_dev);
	close(fd);
	assert_int_equal(tfile_open_magic(path, 16, NULL), -EFBIG);
}

/* A kernel without openat2 (seccomp answers ENOSYS): a target root is
 * refused and counted; our own root still opens (no root to keep). */
static void test_no_openat2(void **state)
{
	struct fake_root r;
	pid_t pid;
	int status;

	root_make(&r);
	put_file(r.dir, "a", "x");
	pid = fork();
	if (pid == 0) {
		struct sock_filter filter[] = {
		    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]),
					  .filter = filter};
		uint64_t before = refused(TFILE_R_NO_OPENAT2);
		char path[128];
		int fd;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(3);
		if (syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0) >= 0 || errno != ENOSYS)
			_exit(4);
		if (tfile_open(r.fd, "/a", 0, 100, NULL) != -ENOSYS)
			_exit(5);
		if (refused(TFILE_R_NO_OPENAT2) != before + 1)
			_exit(6);
		snprintf(path, sizeof(path), "%s/a", r.dir);
		fd = tfile_open(TFILE_OWN_ROOT, path, 0, 100, NULL);
		if (fd < 0)
			_exit(7);
		close(fd);
		if (tfile_open(TFILE_OWN_ROOT, "/dev/null", 0, 100, NULL) != -ENODEV)
			_exit(8);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	root_drop(&r);
}

/* procfs and sysfs files are regular to fstat, but never opened: a symlink
 * in the target's root to one is refused too. */
static void test_pseudo_fs(void **state)
{
	uint64_t before = refused(TFILE_R_PSEUDO);

	assert_int_equal(tfile_open(TFILE_OWN_ROOT, "/proc/self/status", 0, 1 << 20, NULL), -EPERM);
	assert_int_equal(tfile_open(TFILE_OWN_ROOT, "/proc/version", 0, 1 << 20, NULL), -EPERM);
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0)
		assert_int_equal(tfile_open(TFILE_OWN_ROOT,
					    "/sys/kernel/mm/transparent_hugepage/enabled", 0,
					    1 << 20, NULL),
				 -EPERM);
	assert_true(refused(TFILE_R_PSEUDO) >= before + 2);
}

/* /proc/PID/status read whole or cut, NUL-terminated; a gone pid is -ESRCH. */
static void test_read_status(void **state)
{
	char buf[4096], small[8];
	ssize_t n;

	(void)state;
	n = tfile_read_status(getpid(), buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(strlen(buf), (size_t)n);
	assert_non_null(strstr(buf, "\nPid:\t"));
	assert_int_equal(tfile_read_status(getpid(), small, sizeof(small)), 7);
	assert_string_equal(small, "Name:\tt");
	assert_int_equal(tfile_read_status(0x7ffffff0, buf, sizeof(buf)), -ESRCH);
	assert_int_equal(tfile_read_status(getpid(), buf, 0), -EINVAL);
}

static void test_cred(void **state)
{
	struct tfile_cred c;
	struct stat st = {0};

	assert_int_equal(tfile_parse_cred("Name:\tx\nUid:\t1000\t1001\t1002\t1003\n"
					  "Gid:\t50\t51\t52\t53\nGroups:\t7 8 9 \n",
					  &c),
			 0);
	assert_int_equal(c.uid, 1003); /* the fs uid */
	assert_int_equal(c.gid, 53);
	assert_int_equal(c.ngroups, 3);
	assert_int_equal(c.groups[2], 9);
	assert_int_equal(tfile_parse_cred("Name:\tx\n", &c), -EINVAL);

	/* /etc/shadow: 0640 root:shadow(42) */
	st.st_uid = 0;
	st.st_gid = 42;
	st.st_mode = S_IFREG | 0640;
	c = (struct tfile_cred){.uid = 65534, .gid = 65534};
	assert_false(tfile_readable_by(&st, &c));
	c.groups[c.ngroups++] = 42;
	assert_true(tfile_readable_by(&st, &c));
	c = (struct tfile_cred){.uid = 0, .gid = 0};
	assert_true(tfile_readable_by(&st, &c));
	/* the owner's bits decide for the owner, even against other's */
	st.st_uid = 1000;
	st.st_mode = S_IFREG | 0044;
	c = (struct tfile_cred){.uid = 1000, .gid = 1000};
	assert_false(tfile_readable_by(&st, &c));
	c.uid = 1001;
	assert_true(tfile_readable_by(&st, &c));
}

static void test_open_for(void **state)
{
	char path[] = "/tmp/test_tfile_for.XXXXXX";
	int fd = mkstemp(path);
	struct tfile_cred nobody = {.uid = 65534, .gid = 65534};

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(tfile_open_for(TFILE_OWN_ROOT, NULL, path, &nobody, 1 << 20, NULL),
			 -EACCES);
	assert_int_equal(chmod(path, 0644), 0);
	fd = tfile_open_for(TFILE_OWN_ROOT, NULL, path, &nobody, 1 << 20, NULL);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
}

/* A remote (FUSE) mount at /fuse of the fake root: its paths are refused
 * by their text; a plain path is opened, a symlink followed only within
 * one mount (a link into procfs, another mount, is refused as remote when
 * any mount is remote, before its file is even looked at). */
static void test_open_local(void **state)
{
	struct mountinfo mi = {0}, local = {0};
	struct fake_root r;
	struct stat a, b;
	char path[128];
	int fd;

	root_make(&r);
	assert_int_equal(mountinfo_parse("20 1 0:99 / /fuse rw - fuse.hostile hostile rw\n"
					 "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
					 &mi),
			 0);
	assert_int_equal(mountinfo_parse("21 1 8:1 / / rw - ext4 /dev/sda1 rw\n", &local), 0);
	sh("mkdir -p '%1$s/a' '%1$s/fuse' && echo hi > '%1$s/a/file' && ln -s /a/file '%1$s/link' "
	   "&& "
	   "ln -s /fuse/x '%1$s/tolink' && ln -s /proc/self/status '%1$s/toproc'",
	   r.dir);
	assert_int_equal(tfile_open_local(r.fd, &mi, "/fuse/x", 0, 1 << 20, NULL), -EREMOTE);
	assert_int_equal(tfile_open_local(r.fd, &local, "/fuse/x", 0, 1 << 20, NULL), -ENOENT);
	assert_int_equal(tfile_open_local(r.fd, NULL, "/fuse/x", 0, 1 << 20, NULL), -ENOENT);
	fd = tfile_open_local(r.fd, &mi, "/a/file", 0, 1 << 20, NULL);
	assert_true(fd >= 0);
	close(fd);
	fd = tfile_open_local(r.fd, &mi, "/link", 0, 1 << 20, NULL);
	assert_true(fd >= 0);
	close(fd);
	fd = tfile_open_local(r.fd, &mi, "/a/../a/./file", 0, 1 << 20, NULL);
	assert_true(fd >= 0);
	close(fd);
	/* The fake /fuse is a plain directory: followed, nothing there. */
	assert_int_equal(tfile_open_local(r.fd, &mi, "/tolink", 0, 1 << 20, NULL), -ENOENT);
	/* The last component a symlink with TFILE_NOFOLLOW: never a file. */
	assert_int_equal(tfile_open_local(r.fd, &mi, "/link", TFILE_NOFOLLOW, 1 << 20, NULL),
			 -ELOOP);
	/* Our own root: a link from here into /proc crosses a mount. */
	snprintf(path, sizeof(path), "%s/toproc", r.dir);
	if (stat("/", &a) == 0 && stat(r.dir, &b) == 0 && a.st_dev == b.st_dev)
		assert_int_equal(tfile_open_local(TFILE_OWN_ROOT, &mi, path, 0, 1 << 20, NULL),
				 -EREMOTE);
	assert_int_equal(tfile_open_local(TFILE_OWN_ROOT, &local, path, 0, 1 << 20, NULL), -EPERM);
	mountinfo_free(&mi);
	mountinfo_free(&local);
	root_drop(&r);
}

static void test_bad_args(void **state)
{
	assert_int_equal(tfile_open(-5, "/a", 0, 1, NULL), -EINVAL);
	assert_int_equal(tfile_open(TFILE_OWN_ROOT, "", 0, 1, NULL), -EINVAL);
	assert_int_equal(tfile_open(TFILE_OWN_ROOT, NULL, 0, 1, NULL), -EINVAL);
	assert_int_equal(tfile_root_open_path(""), TFILE_OWN_ROOT);
	assert_int_equal(tfile_root_open_path("/nonexistent-tfile"), -ENOENT);
	assert_int_equal(tfile_root_open(0x7ffffff0), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_regular),	    TEST(test_fifo),
	    TEST(test_device),	    TEST(test_symlinks_stay_in_root),
	    TEST(test_size_cap),    TEST(test_magic_map_files),
	    TEST(test_no_openat2),  TEST(test_bad_args),
	    TEST(test_pseudo_fs),   TEST(test_cred),
	    TEST(test_read_status), TEST(test_open_for),
	    TEST(test_open_local),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
