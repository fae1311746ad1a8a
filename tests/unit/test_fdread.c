/* Unit tests for fdread: fdread_at on a file, fdread_all to the end of a
 * pipe, under and over its cap, with and without a size hint. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/fdread.h"

/* A pipe's read end holding text (and its write end closed). */
static int piped(const char *text)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	close(p[1]);
	return p[0];
}

static void test_all(void **state)
{
	static const struct {
		const char *text;
		size_t max, hint;
		int rc;
		const char *got;
	} cases[] = {
	    {"0123456789", 100, 0, 0, "0123456789"},
	    {"0123456789", 10, 0, 0, "0123456789"},   /* exactly max */
	    {"0123456789", 4, 0, -EFBIG, "0123"},     /* the first max bytes */
	    {"0123456789", 100, 2, 0, "0123456789"},  /* a hint too small grows */
	    {"0123456789", 100, 10, 0, "0123456789"}, /* the hint exact */
	    {"0123456789", 4, 5, -EFBIG, NULL},	      /* a hint past max: nothing read */
	    {"", 100, 0, 0, ""},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = piped(cases[i].text);
		char *buf = (char *)1;
		size_t len = 99;

		assert_int_equal(fdread_all(fd, cases[i].max, cases[i].hint, &buf, &len),
				 cases[i].rc);
		if (cases[i].got) {
			assert_non_null(buf);
			assert_int_equal(len, strlen(cases[i].got));
			assert_memory_equal(buf, cases[i].got, len);
		} else {
			assert_null(buf);
			assert_int_equal(len, 0);
		}
		free(buf);
		close(fd);
	}
}

static void test_all_bad_fd(void **state)
{
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(fdread_all(-1, 10, 0, &buf, &len), -EBADF);
	assert_null(buf);
}

static void test_at(void **state)
{
	char path[] = "/tmp/stacktop-test-fdread.XXXXXX", buf[16];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "hello world", 11), 11);
	assert_int_equal(fdread_at(fd, buf, 5, 6), 5);
	assert_memory_equal(buf, "world", 5);
	assert_int_equal(fdread_at(fd, buf, sizeof(buf), 6), 5); /* short: the end */
	assert_int_equal(fdread_at(-1, buf, 1, 0), -EBADF);
	close(fd);
}

TEST_MAIN(NULL, NULL, TEST(test_all), TEST(test_all_bad_fd), TEST(test_at))
