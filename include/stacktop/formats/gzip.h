/*
 * gzip — the compression of profile files (RFC 1952, as pprof files are):
 * whole buffers in, whole malloc'd buffers out, no streaming. The writers
 * (pprof, memexport) compress; report inflates what it reads, under a cap
 * on the output the caller chooses (a small file must not inflate into all
 * of memory).
 *
 * Neither function keeps anything: the caller frees the buffer it gets.
 */
#ifndef STACKTOP_GZIP_H
#define STACKTOP_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* in[0..n) compressed into a malloc'd *buf of *len bytes (a gzip header
 * with no name and time 0, so the same input gives the same bytes). 0,
 * -ENOMEM or -EIO. */
int gzip_compress(const uint8_t *in, size_t n, char **buf, size_t *len);

/* The gzip (or zlib) stream in[0..n) inflated into a malloc'd *out of
 * *outlen bytes, never more than limit bytes. 0; -EFBIG (it would pass
 * limit), -ENODATA (the input ends before the stream does: truncated),
 * -EINVAL (corrupt) or -ENOMEM. On error nothing is allocated. */
int gzip_inflate(const uint8_t *in, size_t n, size_t limit, uint8_t **out, size_t *outlen);

/* The two magic bytes of a gzip file first. */
bool gzip_magic(const uint8_t *d, size_t n);

#endif
