/* Unit tests for procstat: the stat/status/cgroup/children parsers on
 * literal text, and live readings of this process (CPU grows with work,
 * anonymous memory grows with an allocation, a zombie child is found, also
 * one forked by another thread, without reading /proc as a directory or
 * any other process's files; a kept-open file reads fresh text each time).
 *
 * This file defines open, openat and opendir: the library is linked in
 * statically, so its calls come here first, and the test sees every path
 * procstat opens (no LD_PRELOAD needed). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/procstat.h"

/* ---- every path procstat opens, while recording ---- */

static bool recording;
static char opened[64][128];
static int nopened;

static void note_open(const char *path)
{
	if (recording && nopened < 64)
		snprintf(opened[nopened++], sizeof(opened[0]), "%s", path);
}

static int real_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	note_open(path);
	return real_openat(dirfd, path, flags, mode);
}

/* open is openat at the working directory (recorded there). */
int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);
}

DIR *opendir(const char *path)
{
	note_open(path);
	int fd = real_openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (fd >= 0 && !d)
		close(fd);
	return d;
}

/* Every path opened since the last call was this process's own, or child's
 * stat; none was /proc itself. */
static void assert_opened_only(pid_t child)
{
	char self[32], kid[32];
	snprintf(self, sizeof(self), "/proc/%d/", (int)getpid());
	snprintf(kid, sizeof(kid), "/proc/%d/stat", (int)child);
	for (int i = 0; i < nopened; i++) {
		if (strncmp(opened[i], self, strlen(self)) && strcmp(opened[i], kid))
			fail_msg("procstat opened %s", opened[i]);
	}
	nopened = 0;
}

static void test_parse_stat(void **state)
{
	char st, comm[32];
	double cpu;
	/* utime 250 + stime 50 ticks; a comm with ") (" inside. */
	const char *line =
	    "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 "
	    "7 0 123 456 789\n";
	assert_int_equal(procstat_parse_stat(line, &st, &cpu, comm, sizeof(comm)), 0);
	assert_int_equal(st, 'S');
	assert_string_equal(comm, "my (odd) name");
	assert_float_equal(cpu, 300.0 / sysconf(_SC_CLK_TCK), 1e-9);
	assert_int_equal(procstat_parse_stat("4242 (x", &st, &cpu, comm, sizeof(comm)), -EINVAL);
	assert_int_equal(procstat_parse_stat("4242 (x) R 1", &st, &cpu, NULL, 0), -EINVAL);
}

/* The whole stat line: comm up to the LAST ')', whatever it holds. */
static void test_parse_stat_full(void **state)
{
	struct procstat_stat s;
	double tck = (double)sysconf(_SC_CLK_TCK);
	/* comm ") (x) R 1 2 (" tries to pass for fields; 0x00200000 is
	 * PF_KTHREAD; 3 threads, start 98765, 25 resident pages. */
	const char *hostile = "77 () (x) R 1 2 () D 5 77 77 0 -1 2097216 1 0 0 0 120 30 0 0 20 0 "
			      "3 0 98765 4096000 25 18446744073709551615 1 1 0 0 0 0 0\n";
	assert_int_equal(procstat_parse_stat_full(hostile, &s), 0);
	assert_int_equal(s.pid, 77);
	assert_string_equal(s.comm, ") (x) R 1 2 (");
	assert_int_equal(s.state, 'D');
	assert_int_equal(s.ppid, 5);
	assert_true(s.flags & PROCSTAT_PF_KTHREAD);
	assert_float_equal(s.cpu_s, 150.0 / tck, 1e-9);
	assert_int_equal(s.nthreads, 3);
	assert_int_equal(s.start, 98765);
	assert_int_equal(s.rss_pages, 25);

	/* Spaces, a newline and a long name: cut to 31 bytes. */
	const char *spaces =
	    "9 (a b\nc d e f g h i j k l m n o p q r s t) S 0 0 0 0 -1 0 0 0 0 0 0 0 "
	    "0 0 20 0 1 0 5 0 0\n";
	assert_int_equal(procstat_parse_stat_full(spaces, &s), 0);
	assert_int_equal(strlen(s.comm), 31);
	assert_memory_equal(s.comm, "a b\nc d", 7);
	assert_false(s.flags & PROCSTAT_PF_KTHREAD);

	/* Truncated anywhere: refused, never half read. */
	const char *cut[] = {
	    "",
	    "77",
	    "77 (x",
	    "77 (x)",
	    "77 (x) ",
	    "77 (x) R",
	    "77 (x) R 1 2 3",
	    "77 (x) R 5 77 77 0 -1 0 1 0 0 0 120 30 0 0 20 0 3 0 98765 4096000", /* no rss */
	    "77 (x) R 5 77 77 0 -1 0 1 0 0 0 120 30 0 0 20 0 3 0 98765 4096000 2x",
	    "x (x) R 5 77 77 0 -1 0 1 0 0 0 120 30 0 0 20 0 3 0 98765 4096000 25 0",
	    "-4 (x) R 5 77 77 0 -1 0 1 0 0 0 120 30 0 0 20 0 3 0 98765 4096000 25 0",
	    /* A number past 64 bits: not read as the largest one. */
	    "77 (x) R 5 77 77 0 -1 0 1 0 0 0 99999999999999999999999 30 0 0 20 0 3 0 98765 "
	    "4096000 25 0",
	};
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		if (procstat_parse_stat_full(cut[i], &s) != -EINVAL)
			fail_msg("accepted \"%s\"", cut[i]);
	/* Every prefix of a good line but the whole is refused too. */
	char buf[256];
	size_t len = strlen(hostile) - 1; /* without the newline */
	for (size_t n = 0; n < len; n++) {
		memcpy(buf, hostile, n);
		buf[n] = '\0';
		/* Past rss (field 24) the line has all it needs. */
		if (n < strlen("77 () (x) R 1 2 () D 5 77 77 0 -1 2097216 1 0 0 0 120 30 0 0 20 0 "
			       "3 0 98765 4096000 25") &&
		    procstat_parse_stat_full(buf, &s) == 0 && s.rss_pages == 25)
			fail_msg("prefix of %zu bytes read as whole", n);
	}
}

static void test_parse_status_mem(void **state)
{
	struct procstat_mem m;
	const char *text = "Name:\tx\nVmRSS:\t  812000 kB\nRssAnon:\t  790000 kB\n"
			   "RssFile:\t   20000 kB\nRssShmem:\t    2000 kB\nVmSwap:\t 0 kB\n";
	assert_int_equal(procstat_parse_status_mem(text, &m), 0);
	assert_int_equal(m.rss, 812000ull * 1024);
	assert_int_equal(m.anon, 790000ull * 1024);
	assert_int_equal(m.file, 20000ull * 1024);
	assert_int_equal(m.shmem, 2000ull * 1024);
	assert_int_equal(procstat_parse_status_mem("Name:\tkthreadd\n", &m), -EINVAL);
}

static void test_parse_cgroup(void **state)
{
	char path[128];
	int v2;
	assert_int_equal(
	    procstat_parse_cgroup("0::/system.slice/app.service\n", path, sizeof(path), &v2), 0);
	assert_string_equal(path, "/system.slice/app.service");
	assert_int_equal(v2, 1);
	const char *hybrid = "12:cpu,cpuacct:/a\n5:memory:/docker/abc\n0::/init.scope\n";
	assert_int_equal(procstat_parse_cgroup(hybrid, path, sizeof(path), &v2), 0);
	assert_string_equal(path, "/docker/abc");
	assert_int_equal(v2, 0);
	assert_int_equal(procstat_parse_cgroup("garbage", path, sizeof(path), &v2), -ENOENT);
}

static void test_live_cpu_and_state(void **state)
{
	char st;
	double before, after;
	assert_int_equal(procstat_process(getpid(), &st, &before), 0);
	volatile uint64_t x = 1;
	for (long i = 0; i < 300000000; i++)
		x = x * 3 + 1;
	assert_int_equal(procstat_process(getpid(), &st, &after), 0);
	assert_true(after - before > 0.05);
	struct procstat_task t;
	assert_int_equal(procstat_task(getpid(), getpid(), &t), 0);
	assert_int_equal(t.state, 'R');
	assert_string_equal(t.comm, "test_procstat");
	assert_true(t.cpu_s >= after - 0.02);
	assert_int_equal(procstat_process(999999999, &st, &after), -ESRCH);
}

static void test_live_memory(void **state)
{
	struct procstat_mem a, b;
	assert_int_equal(procstat_mem(getpid(), &a), 0);
	size_t sz = 64 << 20;
	/* Touch every page through a volatile pointer: the compiler must not
	 * drop stores to memory that is freed unread. */
	volatile char *p = malloc(sz);
	for (size_t i = 0; i < sz; i += 4096)
		p[i] = 1;
	assert_int_equal(procstat_mem(getpid(), &b), 0);
	assert_true(b.anon >= a.anon + sz - (4 << 20));
	assert_true(b.rss >= b.anon);
	free((void *)p);
	uint64_t limit = 0;
	const char *src = NULL;
	assert_int_equal(procstat_mem_limit(getpid(), &limit, &src), 0);
	assert_non_null(src);
	assert_true(limit > (64ull << 20));
}

static void test_parse_children(void **state)
{
	pid_t out[4];
	assert_int_equal(procstat_parse_children("", out, 4), 0);
	assert_int_equal(procstat_parse_children("123 ", out, 4), 1);
	assert_int_equal(out[0], 123);
	assert_int_equal(procstat_parse_children("1 22 333 4444 55555 ", out, 4), 4);
	assert_int_equal(out[3], 4444);
	assert_int_equal(procstat_parse_children("7 x 8", out, 4), 1);
	assert_int_equal(procstat_parse_children("-3 9", out, 4), 0);
}

static void test_zombie_child(void **state)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	pid_t z[8];
	int n = 0;
	recording = true;
	nopened = 0;
	for (int i = 0; i < 100 && n == 0; i++) {
		usleep(10000);
		assert_int_equal(procstat_zombie_children(getpid(), z, 8, &n), 0);
		assert_opened_only(child); /* no scan of /proc */
	}
	recording = false;
	assert_int_equal(n, 1);
	assert_int_equal(z[0], child);
	waitpid(child, NULL, 0);
	assert_int_equal(procstat_zombie_children(getpid(), z, 8, &n), 0);
	assert_int_equal(n, 0);
}

/* A thread that forks: the child is on that thread's children list, not
 * the main thread's. */
struct forker {
	pid_t tid, child;
};

static void *fork_from_thread(void *arg)
{
	struct forker *fk = arg;
	fk->tid = (pid_t)syscall(SYS_gettid);
	fk->child = fork();
	if (fk->child == 0)
		_exit(0);
	for (;;)
		pause(); /* the thread must live: its children move on when it exits */
	return NULL;
}

static void test_zombie_child_of_thread(void **state)
{
	pthread_t t;
	struct forker fk = {0, 0};
	pid_t z[8];
	int n = 0;
	struct procstat_file f;

	assert_int_equal(pthread_create(&t, NULL, fork_from_thread, &fk), 0);
	recording = true;
	nopened = 0;
	for (int i = 0; i < 200 && n == 0; i++) {
		usleep(10000);
		assert_int_equal(procstat_zombie_children(getpid(), z, 8, &n), 0);
		assert_opened_only(fk.child);
	}
	recording = false;
	assert_int_equal(n, 1);
	assert_int_equal(z[0], fk.child);

	/* The main thread's own list does not hold it. */
	n = 0;
	assert_int_equal(procstat_task_zombies(NULL, getpid(), getpid(), z, 8, &n), 0);
	assert_int_equal(n, 0);

	/* Through a file kept open: the same descriptor, read again, follows
	 * the reaping (the kernel makes the text afresh at offset 0). */
	procstat_file_init(&f);
	assert_int_equal(procstat_task_zombies(&f, getpid(), fk.tid, z, 8, &n), 1);
	assert_int_equal(n, 1);
	int fd = f.fd;
	assert_true(fd >= 0);
	waitpid(fk.child, NULL, 0);
	n = 0;
	assert_int_equal(procstat_task_zombies(&f, getpid(), fk.tid, z, 8, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(f.fd, fd); /* not reopened */
	procstat_file_close(&f);
	assert_int_equal(f.fd, -1);

	pthread_cancel(t);
	pthread_join(t, NULL);
}

/* A kept file of a thread that is gone reads -ESRCH, and the next read
 * opens the path again. */
static void *quick(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static void test_file_of_gone_thread(void **state)
{
	pthread_t t;
	pid_t tid = 0;
	char buf[1024];
	struct procstat_file f;

	procstat_file_init(&f);
	assert_true(procstat_file_read(&f, getpid(), 0, "stat", buf, sizeof(buf)) > 0);
	assert_true(f.fd >= 0);
	assert_true(procstat_file_read(&f, getpid(), 0, "stat", buf, sizeof(buf)) > 0);
	procstat_file_close(&f);

	assert_int_equal(pthread_create(&t, NULL, quick, &tid), 0);
	pthread_join(t, NULL);
	assert_true(tid > 0);
	assert_int_equal(procstat_file_read(&f, getpid(), tid, "stat", buf, sizeof(buf)), -ESRCH);
	assert_int_equal(f.fd, -1);
}

TEST_MAIN(NULL, NULL, TEST(test_parse_stat), TEST(test_parse_stat_full),
	  TEST(test_parse_status_mem), TEST(test_parse_cgroup), TEST(test_live_cpu_and_state),
	  TEST(test_live_memory), TEST(test_parse_children), TEST(test_zombie_child),
	  TEST(test_zombie_child_of_thread), TEST(test_file_of_gone_thread))
