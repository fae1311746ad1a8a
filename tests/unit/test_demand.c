/* Unit tests for demand: the schedstat line, the step between two reads
 * (a thread at both counts its run + wait delta, at most the interval in
 * the sum, raw in its delta; its run apart; a new one counts from its
 * first read, a gone one drops out, the first read gives no point), and
 * demand_read on our own threads. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/demand.h"

#define MS 1000000ull

static void test_parse(void **state)
{
	uint64_t run = 0, dem = 0;

	assert_int_equal(demand_parse("1500 2500 7\n", &run, &dem), 0);
	assert_int_equal(run, 1500);
	assert_int_equal(dem, 4000);
	assert_int_equal(demand_parse("18446744073 0 1\n", &run, &dem), 0);
	assert_int_equal(dem, 18446744073ull);
	assert_int_equal(demand_parse("", &run, &dem), -EINVAL);
	assert_int_equal(demand_parse("12", &run, &dem), -EINVAL);
	assert_int_equal(demand_parse("x y z", &run, &dem), -EINVAL);
}

static void test_update(void **state)
{
	struct demand d = {0};
	struct demand_step st = {.pct = -1};
	struct demand_ns r1[] = {{12, 4000 * MS, 5000 * MS}, {10, 100 * MS, 100 * MS}};

	/* First read: no point. */
	assert_int_equal(demand_update(&d, 1000 * MS, r1, 2, &st), 0);
	assert_true(st.pct == -1);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.th[0].tid, 10); /* sorted */

	/* 1 s later: 10 ran 200 ms and waited 400, 12 ran the whole second;
	 * 11 is new with 9 s of life (nothing of it counts). */
	struct demand_ns r2[] = {
	    {11, 8000 * MS, 9000 * MS}, {12, 5000 * MS, 6000 * MS}, {10, 300 * MS, 700 * MS}};
	assert_int_equal(demand_update(&d, 2000 * MS, r2, 3, &st), 1);
	assert_float_equal(st.pct, 160, 1e-6);
	assert_float_equal(st.run_pct, 120, 1e-6);
	assert_true(st.dt_ns == 1000 * MS);
	assert_int_equal(st.n, 2); /* 10 and 12, sorted */
	assert_int_equal(st.delta[0].tid, 10);
	assert_true(st.delta[0].run == 200 * MS && st.delta[0].dem == 600 * MS);
	assert_int_equal(st.delta[1].tid, 12);

	/* Another 500 ms: 12 gone (its last part lost), 11 ran 250 ms, 10
	 * slept. */
	struct demand_ns r3[] = {{10, 300 * MS, 700 * MS}, {11, 8250 * MS, 9250 * MS}};
	assert_int_equal(demand_update(&d, 2500 * MS, r3, 2, &st), 1);
	assert_float_equal(st.pct, 50, 1e-6);
	assert_float_equal(st.run_pct, 50, 1e-6);

	/* 100 ms later: 10 ran 50 ms and waited 100 (a wait begun before
	 * the last read, added when it ended): 100 % of the interval at
	 * most in the sum, the raw delta in the step. */
	struct demand_ns r4[] = {{10, 350 * MS, 850 * MS}, {11, 8250 * MS, 9250 * MS}};
	assert_int_equal(demand_update(&d, 2600 * MS, r4, 2, &st), 1);
	assert_float_equal(st.pct, 100, 1e-6);
	assert_float_equal(st.run_pct, 50, 1e-6);
	assert_true(st.delta[0].dem == 150 * MS);

	/* No time passed: no point. */
	st.pct = -1;
	assert_int_equal(demand_update(&d, 2600 * MS, r4, 2, &st), 0);
	assert_true(st.pct == -1);
}

static volatile bool stop;

static void *spinner(void *arg)
{
	while (!stop)
		;
	return NULL;
}

/* Our own threads, read twice: the spinning one's demand shows. */
static void test_read_self(void **state)
{
	struct demand d = {0};
	char buf[4096];
	unsigned files = 0;
	struct demand_step st;
	pthread_t th;
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(procfd >= 0);
	assert_int_equal(pthread_create(&th, NULL, spinner, NULL), 0);
	assert_int_equal(demand_read(procfd, getpid(), 2, &d, buf, sizeof(buf), &st, &files), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(files, 3); /* the task directory and two threads */
	/* The spinner: 100 %, run or waiting; but a wait still under way at
	 * a read counts only when it ends, so on a loaded box one point may
	 * read low: a few points, one of them must show it. */
	double best = 0;
	for (int i = 0; i < 10 && best <= 50; i++) {
		usleep(300 * 1000);
		assert_int_equal(
		    demand_read(procfd, getpid(), 2, &d, buf, sizeof(buf), &st, &files), 1);
		best = st.pct > best ? st.pct : best;
	}
	stop = true;
	pthread_join(th, NULL);
	assert_true(best > 50);
	assert_int_equal(demand_read(procfd, 999999999, 1, &d, buf, sizeof(buf), &st, &files),
			 -ESRCH);
	close(procfd);
}

TEST_MAIN(NULL, NULL, TEST(test_parse), TEST(test_update), TEST(test_read_self))
