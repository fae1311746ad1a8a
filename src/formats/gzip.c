/*
 * gzip — whole-buffer deflate and inflate through zlib (see gzip.h).
 *
 * Inflating grows the output from 4 times the input (plus 4 KiB), doubling
 * up to the caller's limit; zlib counts in uInt, so input and output are
 * handed to it at most UINT_MAX bytes at a time.
 */
#include "stacktop/formats/gzip.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

int gzip_compress(const uint8_t *in, size_t n, char **buf, size_t *len)
{
	z_stream z = {0};
	uLong bound;
	char *out;
	int rc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)n) + 64;
	if (!(out = malloc(bound))) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	*len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return -EIO;
	}
	*buf = out;
	return 0;
}

bool gzip_magic(const uint8_t *d, size_t n)
{
	return n >= 2 && d[0] == 0x1f && d[1] == 0x8b;
}

int gzip_inflate(const uint8_t *in, size_t n, size_t limit, uint8_t **out, size_t *outlen)
{
	z_stream z = {0};
	size_t cap = limit > 4096 && n < (limit - 4096) / 4 ? n * 4 + 4096 : limit, len = 0;
	uint8_t *buf = malloc(cap);
	int rc = Z_OK;

	if (!buf || inflateInit2(&z, 15 + 32) != Z_OK) { /* +32: gzip or zlib header */
		free(buf);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	while (rc == Z_OK) {
		if (len == cap) {
			uint8_t *p;
			if (cap >= limit) {
				inflateEnd(&z);
				free(buf);
				return -EFBIG;
			}
			cap = cap > limit / 2 ? limit : cap * 2;
			if (!(p = realloc(buf, cap))) {
				inflateEnd(&z);
				free(buf);
				return -ENOMEM;
			}
			buf = p;
		}
		size_t in_left = n - (size_t)((const uint8_t *)z.next_in - in);
		size_t out_left = cap - len;
		z.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
		z.next_out = buf + len;
		z.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
		out_left = z.avail_out;
		rc = inflate(&z, Z_NO_FLUSH);
		len += out_left - z.avail_out;
		if (rc == Z_BUF_ERROR && z.avail_out)
			break; /* no progress possible: the input ended early */
		if (rc == Z_BUF_ERROR)
			rc = Z_OK;
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return rc == Z_BUF_ERROR || rc == Z_OK ? -ENODATA : -EINVAL;
	}
	*out = buf;
	*outlen = len;
	return 0;
}
