/* Unit tests for the pump hook: nothing without a hook, at most one call
 * per PUMP_EVERY_NS, never from inside itself, never from another thread. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/mono.h"
#include "stacktop/lib/pump.h"

static int calls;

static void hook(void *ctx)
{
	calls++;
	pump(); /* nested: ignored */
	*(int *)ctx += 1;
}

static void wait_past(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;
	while (mono_ns() < end)
		;
}

static void test_no_hook(void **state)
{
	pump_set(NULL, NULL);
	pump(); /* nothing to call */
}

static void test_pace(void **state)
{
	int n = 0;
	calls = 0;
	pump_set(hook, &n);
	pump();
	assert_int_equal(n, 1);
	pump(); /* too soon */
	assert_int_equal(n, 1);
	wait_past(PUMP_EVERY_NS + 1000000);
	pump();
	assert_int_equal(n, 2);
	assert_int_equal(calls, 2);
	pump_set(NULL, NULL);
}

static void *other(void *arg)
{
	pump();
	return NULL;
}

static void test_other_thread(void **state)
{
	int n = 0;
	pthread_t t;
	pump_set(hook, &n);
	assert_int_equal(pthread_create(&t, NULL, other, NULL), 0);
	pthread_join(t, NULL);
	assert_int_equal(n, 0);
	pump_set(NULL, NULL);
}

TEST_MAIN(NULL, NULL, TEST(test_no_hook), TEST(test_pace), TEST(test_other_thread))
