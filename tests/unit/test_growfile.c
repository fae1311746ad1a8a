/* test_growfile — a file read as it grows: when a check is due, an append
 * told from a rewrite by the bytes before the parsed end, the pace. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "helpers.h"
#include "stacktop/lib/growfile.h"

static void test_due(void **state)
{
	struct growfile_pace p = GROWFILE_PACE_DEFAULT;
	struct growfile g = {0};

	(void)state;
	assert_true(growfile_due(&g, 5000000000ull, &p, false)); /* never checked */
	assert_false(growfile_due(&g, 5500000000ull, &p, false));
	assert_true(growfile_due(&g, 5500000000ull, &p, true)); /* a tenth when soon */
	assert_false(growfile_due(&g, 5550000000ull, &p, true));
	assert_true(growfile_due(&g, 6500000000ull, &p, false));
	growfile_pace_tune(&p, 0, 0);
	assert_int_equal(p.chunk, 8u << 20);
	assert_int_equal(p.budget_ns, 100000000ull);
	growfile_pace_tune(&p, 0, 4096);
	assert_int_equal(p.chunk, 4096);
	assert_int_equal(p.budget_ns, 0);
	assert_true(growfile_due(&g, 6500000000ull, &p, false));
}

/* Appended to: the bytes before done stand; rewritten in place with other
 * bytes, or cut below done: not an append. */
static void test_appended(void **state)
{
	char path[] = "/tmp/test_growfile.XXXXXX";
	struct growfile g = {0};
	struct stat st;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	put_bytes(path, "line one\nline two\n", 18, O_TRUNC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_false(growfile_appended(&g, fd, &st)); /* never seen */
	growfile_seen(&g, &st);
	assert_true(growfile_same(&g, &st));
	assert_true(growfile_appended(&g, fd, &st)); /* nothing parsed yet */
	assert_int_equal(growfile_advance(&g, fd, 9), 0);
	assert_int_equal(g.done, 9);
	assert_int_equal(g.chk_len, 9);
	put_bytes(path, "line three\n", 11, O_APPEND);
	assert_int_equal(fstat(fd, &st), 0);
	assert_false(growfile_same(&g, &st));
	assert_true(growfile_appended(&g, fd, &st));
	put_bytes(path, "LINE ONE\nline two\n", 18, O_TRUNC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_false(growfile_appended(&g, fd, &st)); /* rewritten */
	put_bytes(path, "line", 4, O_TRUNC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_false(growfile_appended(&g, fd, &st)); /* shorter than done */
	growfile_restart(&g);
	assert_true(growfile_appended(&g, fd, &st));
	assert_int_equal(growfile_advance(&g, fd, 100), -EIO); /* past the end */
	close(fd);
	unlink(path);
}

TEST_MAIN(NULL, NULL, TEST(test_due), TEST(test_appended))
