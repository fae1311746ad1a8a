/*
 * gunzip.h — inflate a gzip buffer in memory, for the unit tests that read
 * back what export wrote (header only, static inline). Include after
 * cmocka.h and zlib.h.
 */
#ifndef STACKTOP_TEST_GUNZIP_H
#define STACKTOP_TEST_GUNZIP_H

#include <stddef.h>
#include <stdint.h>

/* The n gzip bytes at gz, inflated into a static 1 MiB buffer (valid until
 * the next call); *out_n gets its length. The test fails on bad data. */
static inline const uint8_t *gunzip(const void *gz, size_t n, size_t *out_n)
{
	static uint8_t raw[1 << 20];
	z_stream z = {0};

	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)n;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	inflateEnd(&z);
	*out_n = z.total_out;
	return raw;
}

#endif
