/* Unit tests for dynload: a library opened by soname and its names
 * resolved, all or nothing; a missing library or name is an error, not a
 * crash. And the two libraries stacktop opens on first use are not in the
 * process before (this test binary links libstacktop.a as stacktop does). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/dynload.h"

static void test_resolves(void **state)
{
	const char *const names[] = {"cos", "sqrt"};
	void *fns[2] = {NULL, NULL};
	double (*sq)(double);

	assert_int_equal(dynload_open("libm.so.6", names, fns, 2), 0);
	assert_non_null(fns[0]);
	*(void **)&sq = fns[1];
	assert_true(sq(16.0) == 4.0);
}

static void test_missing(void **state)
{
	const char *const names[] = {"cos", "no_such_function_here"};
	void *fns[2] = {NULL, NULL};

	assert_int_equal(dynload_open("libno-such-library.so.9", names, fns, 1), -ENOENT);
	assert_int_equal(dynload_open("libm.so.6", names, fns, 2), -ENOSYS);
	assert_null(fns[0]); /* all or nothing */
	assert_null(fns[1]);
}

/* Neither capstone nor libdebuginfod is mapped by a process that has not
 * asked for them. */
static void test_not_linked(void **state)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int seen = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		seen += strstr(line, "libcapstone") || strstr(line, "libdebuginfod") ||
			strstr(line, "libcurl");
	fclose(f);
	assert_int_equal(seen, 0);
}

TEST_MAIN(NULL, NULL, TEST(test_resolves), TEST(test_missing), TEST(test_not_linked))
