/* Unit tests for target: stat parsing, procfs reads of our own process,
 * and launching a command (success, exec failure, stop). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/target.h"

static void test_parse_stat_state(void **state)
{
	/* A comm with spaces and a ')' inside must not fool the parser. */
	static const struct {
		const char *stat;
		int ret;
		char state;
	} cases[] = {
	    {"42 (cat) R 1 2 3", 0, 'R'},
	    {"42 (a) b) (c) S 1 2", 0, 'S'},
	    {"42 (a) b) c) S 1 2 3", 0, 'S'},
	    {"42 (x) D 1", 0, 'D'},
	    {"42 (x) Q 1", -EINVAL, 0}, /* no state letter proc(5) knows */
	    {"42 (x) \x01 1", -EINVAL, 0},
	    {"42 (cat", -EINVAL, 0},
	    {"42 (x", -EINVAL, 0},
	    {"", -EINVAL, 0},
	    {NULL, -EINVAL, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char st = 0;
		assert_int_equal(target_parse_stat_state(cases[i].stat, &st), cases[i].ret);
		if (cases[i].ret == 0)
			assert_int_equal(st, cases[i].state);
	}
}

static void test_self(void **state)
{
	char buf[256], st;
	pid_t tids[16];
	int n = 0;
	assert_int_equal(target_exists(getpid()), 0);
	assert_int_equal(target_exists(999999999), -ESRCH);
	assert_int_equal(target_exists(0), -ESRCH);
	assert_int_equal(target_cmdline(getpid(), buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "test_target"));
	assert_int_equal(target_comm(getpid(), getpid(), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "test_target");
	assert_int_equal(target_threads(getpid(), tids, 16, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(tids[0], getpid());
	assert_int_equal(target_state(getpid(), getpid(), &st), 0);
	assert_int_equal(st, 'R');
	pid_t tracer = -1;
	assert_int_equal(target_tracer(getpid(), &tracer), 0);
	assert_int_equal(tracer, 0);
	assert_int_equal(target_threads(999999999, tids, 16, &n), -ESRCH);
}

static void test_spawn_runs_after_go(void **state)
{
	struct target_child c;
	char *argv[] = {"sh", "-c", "exit 7", NULL};
	int status;
	assert_int_equal(target_spawn(argv, TARGET_STDIO_QUIET, &c), 0);
	/* Until go, the child waits: it must not have exited. */
	usleep(50000);
	assert_int_equal(target_child_reap(&c, &status), 0);
	assert_int_equal(target_spawn_go(&c), 0);
	pid_t pid = c.pid;
	assert_true(pid > 0);
	for (int i = 0; i < 200 && !target_child_reap(&c, &status); i++)
		usleep(10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 7);
}

static void test_spawn_exec_failure(void **state)
{
	struct target_child c;
	char *argv[] = {"/nonexistent/stacktop-test", NULL};
	assert_int_equal(target_spawn(argv, TARGET_STDIO_QUIET, &c), 0);
	assert_int_equal(target_spawn_go(&c), -ENOENT);
}

static void test_child_stop(void **state)
{
	struct target_child c;
	char *argv[] = {"sleep", "30", NULL};
	int status;
	assert_int_equal(target_spawn(argv, TARGET_STDIO_QUIET, &c), 0);
	assert_int_equal(target_spawn_go(&c), 0);
	pid_t pid = c.pid;
	target_child_stop(&c, 1000);
	assert_int_equal(c.pid, 0);
	assert_int_equal(target_exists(pid), -ESRCH);
	assert_int_equal(target_child_reap(&c, &status), 1);
}

static void *block_on(void *arg)
{
	char c;
	while (read(*(int *)arg, &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Every thread listed, however many (dump had a cap of 8192): 300 threads
 * need the list grown from 64 three times. */
static void test_threads_all(void **state)
{
	enum { N = 300 };
	static pthread_t th[N];
	int p[2], n = 0, cap = 0;
	pid_t *tids = NULL;
	assert_int_equal(pipe(p), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_create(&th[i], NULL, block_on, &p[0]), 0);
	assert_int_equal(target_threads_all(getpid(), &tids, &cap, &n), 0);
	close(p[1]);
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	close(p[0]);
	assert_int_equal(n, N + 1);
	assert_true(cap > N);
	bool self = false;
	for (int i = 0; i < n; i++)
		self |= tids[i] == getpid();
	assert_true(self);
	free(tids);
	tids = NULL;
	cap = 0;
	assert_int_equal(target_threads_all(999999999, &tids, &cap, &n), -ESRCH);
	free(tids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_parse_stat_state),   TEST(test_self),	  TEST(test_spawn_runs_after_go),
	    TEST(test_spawn_exec_failure), TEST(test_child_stop), TEST(test_threads_all),
	};
	return cmocka_run_group_tests_name("target", tests, NULL, NULL);
}
