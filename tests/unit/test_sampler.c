/*
 * test_sampler — the wrappers of sampler.c over a fake implementation
 * (fake_sampler.h): optional operations left NULL give neutral answers,
 * stop runs its operation once, free stops first, and nothing is collected
 * after a stop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "fake_sampler.h"

/* A sink that counts what it is given. */
static void count_sample(void *ctx, const struct sample *s)
{
	(*(int *)ctx)++;
}

static void test_neutral_answers(void **state)
{
	struct fake_sampler f;
	struct sampler_stats st;
	char buf[128];

	fake_sampler_init(&f, true);
	assert_null(sampler_mode(&f.base));
	assert_int_equal(sampler_nthreads(&f.base), 0);
	assert_false(sampler_has_thread(&f.base, 1));
	assert_int_equal(sampler_tick_ns(&f.base), 0);
	assert_int_equal(sampler_add_thread(&f.base, 1, 1), 0);
	assert_int_equal(sampler_launch_prepare(&f.base, 1), 0);
	sampler_launch_done(&f.base);
	sampler_on_child(&f.base);
	memset(&st, 0xa5, sizeof(st));
	sampler_stats(&f.base, &st);
	assert_int_equal(st.samples, 0);
	assert_int_equal(st.lost, 0);
	assert_false(st.kernel_denied);
	assert_false(st.per_thread_rate);
	assert_true(st.rate_hz == 0);
	sampler_explain(&f.base, -EPERM, 4321, buf, sizeof(buf));
	assert_non_null(strstr(buf, "4321"));
	assert_non_null(strstr(buf, strerror(EPERM)));
	assert_int_equal(buf[strlen(buf) - 1], '.');
	/* No stop op: stop still marks it stopped; free calls free. */
	sampler_stop(&f.base);
	assert_true(f.base.stopped);
	sampler_free(&f.base);
	assert_int_equal(f.frees, 1);
}

static void test_ops_reached(void **state)
{
	struct fake_sampler f;

	fake_sampler_init(&f, false);
	assert_string_equal(sampler_mode(&f.base), "fake");
	assert_int_equal(sampler_add_thread(&f.base, 10, 11), 0);
	assert_int_equal(sampler_add_thread(&f.base, 10, 12), 0);
	assert_int_equal(sampler_add_thread(&f.base, 10, 12), -EEXIST);
	assert_int_equal(sampler_nthreads(&f.base), 2);
	assert_true(sampler_has_thread(&f.base, 12));
	assert_false(sampler_has_thread(&f.base, 13));
	sampler_free(&f.base);
}

static void test_stop_once(void **state)
{
	struct fake_sampler f;

	fake_sampler_init(&f, false);
	sampler_stop(&f.base);
	sampler_stop(&f.base);
	assert_int_equal(f.stops, 1);
	assert_true(f.base.stopped);
	/* Already stopped: free does not stop again. */
	sampler_free(&f.base);
	assert_int_equal(f.stops, 1);
	assert_int_equal(f.frees, 1);
}

static void test_free_stops_first(void **state)
{
	struct fake_sampler f;

	fake_sampler_init(&f, false);
	sampler_free(&f.base);
	assert_int_equal(f.stops, 1);
	assert_int_equal(f.frees, 1);
	assert_true(f.stop_at < f.free_at);
	sampler_free(NULL);
}

static void test_collect_after_stop(void **state)
{
	struct fake_sampler f;
	int got = 0;
	struct sampler_sink sink = {.sample = count_sample, .ctx = &got};

	fake_sampler_init(&f, false);
	assert_int_equal(sampler_add_thread(&f.base, 10, 11), 0);
	assert_int_equal(sampler_add_thread(&f.base, 10, 12), 0);
	assert_int_equal(sampler_collect(&f.base, 1000, &sink), 2);
	assert_int_equal(got, 2);
	sampler_stop(&f.base);
	assert_int_equal(sampler_collect(&f.base, 2000, &sink), 0);
	assert_int_equal(got, 2);
	assert_int_equal(f.collects, 1);
	sampler_free(&f.base);
}

TEST_MAIN(NULL, NULL, TEST(test_neutral_answers), TEST(test_ops_reached), TEST(test_stop_once),
	  TEST(test_free_stops_first), TEST(test_collect_after_stop))
