/*
 * test_procs — attaching (a pid that does not exist, this process),
 * launching a command in two steps and noticing its exit with the status in
 * words, a command that cannot exec, and handing every thread of this
 * process to a sampler (fake_sampler.h). Following child processes: a real
 * fork tree (a child that forks a grandchild) is found in one scan, its
 * threads handed to the sampler, and its end noticed; a launched command
 * that exits before its child ends the run only with the child; the table
 * grows past the old 64.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/app/procs.h"
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
	procs_free(ps);
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

/* ---- following child processes ---- */

static bool has_pid(const pid_t *pids, int n, pid_t pid)
{
	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* A child of this process that forks a grandchild; both block on a pipe
 * until its write end closes. Returns the child; *grand gets the
 * grandchild's pid once it runs. */
static pid_t fork_tree(int *release_fd, pid_t *grand)
{
	int hold[2], report[2];

	assert_int_equal(pipe(report), 0);
	pid_t kid = fork_held(hold);
	if (kid == 0) {
		char c;
		close(report[0]);
		pid_t g = fork();
		if (g == 0) {
			(void)!read(hold[0], &c, 1); /* until the test closes hold[1] */
			_exit(0);
		}
		(void)!write(report[1], &g, sizeof(g));
		(void)!read(hold[0], &c, 1);
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(report[1]);
	assert_int_equal(read(report[0], grand, sizeof(*grand)), (ssize_t)sizeof(*grand));
	close(report[0]);
	*release_fd = hold[1];
	return kid;
}

/* A child with more threads than one read of its task directory holds
 * (8192 once capped the count): every one is counted. */
#define MANY_THREADS 8300

static void test_scan_many_threads(void **state)
{
	struct procs *ps = *state;
	struct fake_sampler f;
	char err[256];
	pid_t kid = spawn_parked(MANY_THREADS);

	if (kid < 0)
		skip(); /* the machine's thread limit: nothing to show */
	fake_sampler_init(&f, false);
	assert_int_equal(procs_attach(ps, &kid, 1, err, sizeof(err)), 0);
	procs_scan(ps, &f.base); /* the fake holds 256: the rest are refused */
	kill_reap(kid);
	assert_int_equal(ps->nthreads, MANY_THREADS);
}

static void test_follow_tree(void **state)
{
	struct procs *ps = *state;
	struct fake_sampler f;
	pid_t self[1] = {getpid()}, got[8], grand = 0;
	char err[256];
	int release, n;

	pid_t kid = fork_tree(&release, &grand);
	fake_sampler_init(&f, false);
	assert_int_equal(procs_attach(ps, self, 1, err, sizeof(err)), 0);
	/* Not following: only this process. */
	assert_int_equal(procs_scan(ps, &f.base), 0);
	assert_int_equal(ps->nkids, 0);
	assert_int_equal(procs_take_new(ps, got, 8), 0);

	procs_follow(ps, true);
	assert_int_equal(procs_scan(ps, &f.base), 0);
	assert_int_equal(ps->nkids, 2);
	n = procs_take_new(ps, got, 8);
	assert_int_equal(n, 2);
	assert_true(has_pid(got, n, kid));
	assert_true(has_pid(got, n, grand));
	assert_int_equal(procs_take_new(ps, got, 8), 0); /* handed out once */
	/* Their threads went to the sampler. */
	assert_true(sampler_has_thread(&f.base, kid));
	assert_true(sampler_has_thread(&f.base, grand));
	assert_int_equal(ps->kids_total, 2);
	/* Found again: nothing new. */
	assert_int_equal(procs_scan(ps, &f.base), 0);
	assert_int_equal(ps->nkids, 2);
	assert_int_equal(procs_take_new(ps, got, 8), 0);
	assert_false(procs_check_exit(ps));
	assert_int_equal(procs_take_ended(ps, got, 8), 0);

	/* Both end (the child a zombie until we reap it: gone all the same). */
	close(release);
	for (int t = 0; t < 200 && ps->nkids > 0; t++) {
		sleep_ms(10);
		assert_false(procs_check_exit(ps)); /* this process lives on */
	}
	assert_int_equal(ps->nkids, 0);
	n = procs_take_ended(ps, got, 8);
	assert_int_equal(n, 2);
	assert_true(has_pid(got, n, kid));
	assert_true(has_pid(got, n, grand));
	assert_int_equal(procs_take_ended(ps, got, 8), 0);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	assert_false(ps->exited);
}

/* A launched shell that exits first: the run ends with its child, and the
 * exit text is still the command's. */
static void test_follow_outlived(void **state)
{
	struct procs *ps = *state;
	struct fake_sampler f;
	char *argv[] = {"/bin/sh", "-c", "sleep 1.5 & sleep 0.6; exit 4", NULL};
	char err[256] = "";
	bool found = false;

	fake_sampler_init(&f, false);
	procs_follow(ps, true);
	assert_int_equal(procs_spawn(ps, argv, TARGET_STDIO_QUIET, err, sizeof(err)), 0);
	assert_int_equal(procs_go(ps, argv, err, sizeof(err)), 0);
	for (int t = 0; t < 50 && !found; t++) {
		sleep_ms(10);
		procs_scan(ps, &f.base);
		found = ps->nkids > 0;
	}
	assert_true(found);
	/* The shell exits with 4 after 0.6 s; its sleep 1.5 lives on. */
	for (int t = 0; t < 150 && !ps->p[0].gone; t++) {
		sleep_ms(10);
		assert_false(procs_check_exit(ps));
	}
	assert_true(ps->p[0].gone);
	assert_false(ps->exited);
	assert_true(exits_within(ps, 3000));
	assert_string_equal(ps->exit_text, "target exited with status 4 (and its child processes)");
}

/* More descendants than the old fixed table of 64. */
static void test_follow_many(void **state)
{
	struct procs *ps = *state;
	struct fake_sampler f;
	pid_t self[1] = {getpid()}, kids[80], got[128];
	int hold[2];
	char err[256];

	assert_int_equal(pipe(hold), 0);
	for (int i = 0; i < 80; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (kids[i] == 0) {
			char c;
			close(hold[1]);
			(void)!read(hold[0], &c, 1);
			_exit(0);
		}
	}
	close(hold[0]);
	fake_sampler_init(&f, false);
	assert_int_equal(procs_attach(ps, self, 1, err, sizeof(err)), 0);
	procs_follow(ps, true);
	procs_scan(ps, &f.base); /* the fake sampler holds 256 threads: enough */
	assert_int_equal(ps->nkids, 80);
	assert_int_equal(ps->unfollowed, 0);
	assert_int_equal(procs_take_new(ps, got, 50), 50);
	assert_int_equal(procs_take_new(ps, got, 50), 30);
	close(hold[1]);
	for (int i = 0; i < 80; i++)
		waitpid(kids[i], NULL, 0);
	assert_false(procs_check_exit(ps));
	assert_int_equal(ps->nkids, 0);
	assert_int_equal(procs_take_ended(ps, got, 128), 80);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(NULL, NULL, T(test_attach_missing), T(test_attach_self), T(test_launch_and_exit),
	  T(test_scan_many_threads), T(test_launch_killed), T(test_cannot_exec),
	  T(test_scan_threads), T(test_follow_tree), T(test_follow_outlived), T(test_follow_many))
