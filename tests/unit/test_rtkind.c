/* Unit tests for rtkind: which runtime a maps text is (whole path
 * components only), and this process (none). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/runtime/rtkind.h"

static enum rtkind kind(const char *maps, int *minor)
{
	return rtkind_of_maps(maps, strlen(maps), minor);
}

static void test_kinds(void **state)
{
	int minor = -1;

	(void)state;
	assert_int_equal(kind("7f-80 r-xp 0 08:01 1 /usr/lib/jvm/x/lib/server/libjvm.so\n", &minor),
			 RTKIND_HOTSPOT);
	assert_int_equal(kind("55-56 r-xp 0 08:01 1 /usr/bin/node\n", &minor), RTKIND_NODE);
	assert_int_equal(kind("7f-80 r-xp 0 08:01 1 /usr/lib/libnode.so.108\n", &minor),
			 RTKIND_NODE);
	assert_int_equal(kind("55-56 r-xp 0 08:01 1 /usr/bin/python3.12\n", &minor), RTKIND_PYTHON);
	assert_int_equal(minor, 12);
	assert_int_equal(
	    kind("7f-80 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0\n", &minor),
	    RTKIND_PYTHON);
	assert_int_equal(minor, 11);
	/* a name that only contains a runtime's is not it */
	assert_int_equal(kind("55-56 r-xp 0 08:01 1 /opt/nodejs-tools/bin/mynode\n"
			      "55-56 r-xp 0 08:01 1 /tmp/python3.x\n"
			      "55-56 r-xp 0 08:01 1 /tmp/libjvm.so.bak\n",
			      &minor),
			 RTKIND_NONE);
	assert_int_equal(kind("", &minor), RTKIND_NONE);
	assert_int_equal(rtkind_of(getpid(), &minor), RTKIND_NONE);
	assert_int_equal(rtkind_of(0x3fffffff, &minor), -ESRCH);
}

TEST_MAIN(NULL, NULL, TEST(test_kinds))
