/*
 * test_procs — attaching (a pid that does not exist, this process),
 * launching a command in two steps and noticing its exit with the status in
 * words, a command that cannot exec, and handing every thread of this
 * process to a sampler (fake_sampler.h).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/procs.h"
#include "fake_sampler.h"
#include "helpers.h"

/* Over pid_max (at most 2^22): never a process. */
#define NO_PID 99999999

static int setup(void **state)
{
	struct procs *ps = calloc(1, sizeof(*ps));

	*state = ps;
	return ps ? 0 : -1;
}

static int teardown(void **state)
{
	struct procs *ps = *state;

	procs_stop_child(ps, 500);
	free(ps);
	return 0;
}

static void test_attach_missing(void **state)
{
	struct procs *ps = *state;
	pid_t pids[1] = {NO_PID};
	char err[256] = "";

	assert_int_equal(procs_attach(ps, pids, 1, err, sizeof(err)), -ESRCH);
	assert_string_equal(err, "no process with PID 99999999 (is it still running?).");
	assert_int_equal(ps->n, 0);
}

static void test_attach_self(void **state)
{
	struct procs *ps = *state;
	pid_t pids[1] = {getpid()};
	char err[256] = "";

	assert_int_equal(procs_attach(ps, pids, 1, err, sizeof(err)), 0);
	assert_int_equal(ps->n, 1);
	assert_int_equal(ps->p[0].pid, getpid());
	assert_non_null(strstr(ps->p[0].cmdline, "test_procs"));
	assert_false(ps->launched);
	assert_false(procs_check_exit(ps));
	assert_false(ps->exited);
	/* Nobody traces us. */
	assert_int_equal(procs_tracer(ps), 0);
}

/* Waits up to ms for procs_check_exit to say the last process ended. */
static bool exits_within(struct procs *ps, long ms)
{
	for (long t = 0; t < ms; t += 10) {
		if (procs_check_exit(ps))
			return true;
		sleep_ms(10);
	}
	return false;
}

static void test_launch_and_exit(void **state)
{
	struct procs *ps = *state;
	char *argv[] = {"/bin/sleep", "0.2", NULL};
	char err[256] = "";

	assert_int_equal(procs_spawn(ps, argv, TARGET_STDIO_QUIET, err, sizeof(err)), 0);
	assert_true(ps->launched);
	assert_int_equal(ps->n, 1);
	assert_int_equal(ps->p[0].pid, ps->child.pid);
	/* Held before its exec: it does not end on its own. */
	sleep_ms(300);
	assert_false(procs_check_exit(ps));
	assert_int_equal(procs_go(ps, argv, err, sizeof(err)), 0);
	assert_true(ps->launched);
	assert_non_null(strstr(ps->p[0].cmdline, "sleep"));
	assert_false(procs_check_exit(ps));
	assert_true(exits_within(ps, 1000));
	assert_true(ps->exited);
	assert_true(ps->p[0].gone);
	assert_string_equal(ps->exit_text, "target exited with status 0");
	/* "Just did" is said once. */
	assert_false(procs_check_exit(ps));
}

static void test_launch_killed(void **state)
{
	struct procs *ps = *state;
	char *argv[] = {"/bin/sleep", "30", NULL};
	char err[256] = "";

	assert_int_equal(procs_spawn(ps, argv, TARGET_STDIO_QUIET, err, sizeof(err)), 0);
	assert_int_equal(procs_go(ps, argv, err, sizeof(err)), 0);
	assert_int_equal(kill(ps->child.pid, SIGKILL), 0);
	assert_true(exits_within(ps, 1000));
	assert_string_equal(ps->exit_text, "target killed by SIGKILL");
}

static void test_cannot_exec(void **state)
{
	struct procs *ps = *state;
	char *argv[] = {"/nonexistent/stacktop-test-cmd", "x", NULL};
	char err[256] = "";

	assert_int_equal(procs_spawn(ps, argv, TARGET_STDIO_QUIET, err, sizeof(err)), 0);
	assert_int_equal(procs_go(ps, argv, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/stacktop-test-cmd"));
	assert_non_null(strstr(err, strerror(ENOENT)));
	assert_false(ps->launched);
}

/* ---- threads ---- */

static pthread_barrier_t ready, done;

static void *parked(void *arg)
{
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return NULL;
}

static void test_scan_threads(void **state)
{
	struct procs *ps = *state;
	struct fake_sampler f;
	pid_t pids[1] = {getpid()}, tids[64];
	pthread_t th[2];
	char err[256];
	int n = 0;

	pthread_barrier_init(&ready, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, parked, NULL), 0);
	pthread_barrier_wait(&ready);

	fake_sampler_init(&f, false);
	assert_int_equal(procs_attach(ps, pids, 1, err, sizeof(err)), 0);
	assert_int_equal(procs_scan(ps, &f.base), 0);
	assert_int_equal(ps->nthreads, 3);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.pid, getpid());
	assert_int_equal(target_threads(getpid(), tids, 64, &n), 0);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++)
		assert_true(sampler_has_thread(&f.base, tids[i]));
	/* Again: nothing new is added. */
	f.adds = 0;
	assert_int_equal(procs_scan(ps, &f.base), 0);
	assert_int_equal(f.adds, 0);
	assert_int_equal(ps->nthreads, 3);

	/* A thread that ended meanwhile is no error; a refusal is. */
	struct fake_sampler g;
	fake_sampler_init(&g, false);
	g.add_err = -ESRCH;
	assert_int_equal(procs_scan(ps, &g.base), 0);
	assert_int_equal(g.adds, 3);
	g.add_err = -EPERM;
	assert_int_equal(procs_scan(ps, &g.base), -EPERM);

	pthread_barrier_wait(&done);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&done);
	/* A joined thread may stay in /proc/PID/task a moment longer. */
	for (int i = 0; i < 100 && ps->nthreads != 1; i++) {
		sleep_ms(10);
		assert_int_equal(procs_scan(ps, &f.base), 0);
	}
	assert_int_equal(ps->nthreads, 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(NULL, NULL, T(test_attach_missing), T(test_attach_self), T(test_launch_and_exit),
	  T(test_launch_killed), T(test_cannot_exec), T(test_scan_threads))
