/* Unit tests for procstat: the stat/status/cgroup parsers on literal text,
 * and live readings of this process (CPU grows with work, anonymous memory
 * grows with an allocation, a zombie child is found). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/procstat.h"

static void test_parse_stat(void **state)
{
	char st, comm[32];
	double cpu;
	/* utime 250 + stime 50 ticks; a comm with ") (" inside. */
	const char *line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 "
			   "7 0 123 456 789\n";
	assert_int_equal(procstat_parse_stat(line, &st, &cpu, comm, sizeof(comm)), 0);
	assert_int_equal(st, 'S');
	assert_string_equal(comm, "my (odd) name");
	assert_float_equal(cpu, 300.0 / sysconf(_SC_CLK_TCK), 1e-9);
	assert_int_equal(procstat_parse_stat("4242 (x", &st, &cpu, comm, sizeof(comm)), -EINVAL);
	assert_int_equal(procstat_parse_stat("4242 (x) R 1", &st, &cpu, NULL, 0), -EINVAL);
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
	assert_int_equal(procstat_parse_cgroup("0::/system.slice/app.service\n", path, sizeof(path), &v2),
			 0);
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

static void test_zombie_child(void **state)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	pid_t z[8];
	int n = 0;
	for (int i = 0; i < 100 && n == 0; i++) {
		usleep(10000);
		assert_int_equal(procstat_zombie_children(getpid(), z, 8, &n), 0);
	}
	assert_int_equal(n, 1);
	assert_int_equal(z[0], child);
	waitpid(child, NULL, 0);
	assert_int_equal(procstat_zombie_children(getpid(), z, 8, &n), 0);
	assert_int_equal(n, 0);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_parse_stat), cmocka_unit_test(test_parse_status_mem),
	  cmocka_unit_test(test_parse_cgroup), cmocka_unit_test(test_live_cpu_and_state),
	  cmocka_unit_test(test_live_memory), cmocka_unit_test(test_zombie_child))
