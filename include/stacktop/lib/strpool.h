/*
 * strpool — strings interned by content: one copy per distinct string, an
 * index per string in insertion order, and stable pointers until
 * strpool_free.
 *
 * Indexed by hashidx on an FNV-1a hash. The pool owns
 * its copies. Zero-initialise a struct strpool before the first call.
 * Used for the pprof string table and speedscope frames (export), a loaded
 * profile's names (report) and the symbolizer's names (sym).
 */
#ifndef STACKTOP_STRPOOL_H
#define STACKTOP_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "stacktop/lib/hashidx.h"

struct strpool {
	char **s; /* s[i]: the i-th distinct string */
	size_t n, cap;
	struct hashidx ix; /* content → index */
};

/* Index of the n bytes at s (no NUL inside), added when new; -ENOMEM. */
int64_t strpool_index(struct strpool *p, const char *s, size_t n);
/* The pool's copy of the n bytes at s, or NULL on ENOMEM. */
const char *strpool_str(struct strpool *p, const char *s, size_t n);
/* The same for a NUL-terminated string. */
const char *strpool_cstr(struct strpool *p, const char *s);
void strpool_free(struct strpool *p);
/* FNV-1a of n bytes. */
uint64_t strpool_hash(const char *s, size_t n);

#endif
