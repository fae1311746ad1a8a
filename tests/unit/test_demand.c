/* Unit tests for demand: the schedstat line, the delta between two reads
 * (a thread at both counts its run + wait delta, at most the interval, a
 * new one counts from its first read, a gone one drops out, the first read gives no point), and
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
	uint64_t ns = 0;

	assert_int_equal(demand_parse("1500 2500 7\n", &ns), 0);
	assert_int_equal(ns, 4000);
	assert_int_equal(demand_parse("18446744073 0 1\n", &ns), 0);
	assert_int_equal(ns, 18446744073ull);
	assert_int_equal(demand_parse("", &ns), -EINVAL);
	assert_int_equal(demand_parse("12", &ns), -EINVAL);
	assert_int_equal(demand_parse("x y z", &ns), -EINVAL);
}

static void test_update(void **state)
{
	struct demand d = {0};
	double pct = -1;
	pid_t t1[] = {12, 10};
	uint64_t n1[] = {5000 * MS, 100 * MS};

	/* First read: no point. */
	assert_int_equal(demand_update(&d, 1000 * MS, t1, n1, 2, &pct), 0);
	assert_true(pct == -1);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.tid[0], 10); /* sorted */

	/* 1 s later: 10 ran + waited 600 ms, 12 the whole second; 11 is new
	 * with 9 s of life (nothing of it counts); 11 joins. */
	pid_t t2[] = {11, 12, 10};
	uint64_t n2[] = {9000 * MS, 6000 * MS, 700 * MS};
	assert_int_equal(demand_update(&d, 2000 * MS, t2, n2, 3, &pct), 1);
	assert_float_equal(pct, 160, 1e-6);

	/* Another second: 12 gone (its last part lost), 11 ran 250 ms, 10
	 * slept, over 500 ms. */
	pid_t t3[] = {10, 11};
	uint64_t n3[] = {700 * MS, 9250 * MS};
	assert_int_equal(demand_update(&d, 2500 * MS, t3, n3, 2, &pct), 1);
	assert_float_equal(pct, 50, 1e-6);

	/* 100 ms later: 10 ran + waited 150 ms (a wait begun before the last
	 * read, added when it ended): 100 % of the interval at most. */
	uint64_t n4[] = {850 * MS, 9250 * MS};
	assert_int_equal(demand_update(&d, 2600 * MS, t3, n4, 2, &pct), 1);
	assert_float_equal(pct, 100, 1e-6);

	/* No time passed: no point. */
	pct = -1;
	assert_int_equal(demand_update(&d, 2600 * MS, t3, n4, 2, &pct), 0);
	assert_true(pct == -1);
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
	double pct = 0;
	pthread_t th;
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(procfd >= 0);
	assert_int_equal(pthread_create(&th, NULL, spinner, NULL), 0);
	assert_int_equal(demand_read(procfd, getpid(), 2, &d, buf, sizeof(buf), &pct, &files), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(files, 3); /* the task directory and two threads */
	usleep(300 * 1000);
	assert_int_equal(demand_read(procfd, getpid(), 2, &d, buf, sizeof(buf), &pct, &files), 1);
	stop = true;
	pthread_join(th, NULL);
	assert_true(pct > 50); /* the spinner: 100 %, run or waiting */
	assert_int_equal(demand_read(procfd, 999999999, 1, &d, buf, sizeof(buf), &pct, &files),
			 -ESRCH);
	close(procfd);
}

TEST_MAIN(NULL, NULL, TEST(test_parse), TEST(test_update), TEST(test_read_self))
