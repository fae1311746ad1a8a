/* Unit tests for gzip: a round trip (and the same bytes twice), the magic,
 * and inflate's refusals: over the caller's limit, truncated, corrupt. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/formats/gzip.h"

/* n bytes of compressible text. */
static uint8_t *text(size_t n)
{
	uint8_t *t = malloc(n);

	assert_non_null(t);
	for (size_t i = 0; i < n; i++)
		t[i] = (uint8_t)("main;work;leaf_a 10\n"[i % 20]);
	return t;
}

static void test_round_trip(void **state)
{
	size_t n = 100000, len, len2, outlen;
	uint8_t *in = text(n), *out;
	char *gz, *gz2;

	assert_int_equal(gzip_compress(in, n, &gz, &len), 0);
	assert_true(len < n / 10);
	assert_true(gzip_magic((const uint8_t *)gz, len));
	/* no name, time 0: the same input gives the same file */
	assert_int_equal(gzip_compress(in, n, &gz2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(gz, gz2, len);
	assert_int_equal(gzip_inflate((const uint8_t *)gz, len, n, &out, &outlen), 0);
	assert_int_equal(outlen, n);
	assert_memory_equal(out, in, n);
	free(out);
	free(gz);
	free(gz2);
	free(in);
}

static void test_empty(void **state)
{
	size_t len, outlen;
	uint8_t *out;
	char *gz;

	assert_int_equal(gzip_compress((const uint8_t *)"", 0, &gz, &len), 0);
	assert_int_equal(gzip_inflate((const uint8_t *)gz, len, 1 << 20, &out, &outlen), 0);
	assert_int_equal(outlen, 0);
	free(out);
	free(gz);
}

static void test_refusals(void **state)
{
	size_t n = 100000, len, outlen = 12345;
	uint8_t *in = text(n), *out = NULL;
	char *gz;

	assert_int_equal(gzip_compress(in, n, &gz, &len), 0);
	/* one byte short of the whole: over the limit, nothing handed out */
	assert_int_equal(gzip_inflate((const uint8_t *)gz, len, n - 1, &out, &outlen), -EFBIG);
	assert_null(out);
	assert_int_equal(outlen, 12345);
	/* the stream cut short (room to spare: at the limit it would be -EFBIG) */
	assert_int_equal(gzip_inflate((const uint8_t *)gz, len / 2, 2 * n, &out, &outlen),
			 -ENODATA);
	assert_int_equal(gzip_inflate((const uint8_t *)gz, len - 1, 2 * n, &out, &outlen),
			 -ENODATA);
	/* a damaged header, and damaged data */
	gz[3] = (char)0xff; /* reserved flag bits */
	assert_int_equal(gzip_inflate((const uint8_t *)gz, len, 2 * n, &out, &outlen), -EINVAL);
	assert_null(out);
	assert_false(gzip_magic((const uint8_t *)"\x1f", 1));
	assert_false(gzip_magic((const uint8_t *)"{}", 2));
	free(gz);
	free(in);
}

TEST_MAIN(NULL, NULL, TEST(test_round_trip), TEST(test_empty), TEST(test_refusals))
