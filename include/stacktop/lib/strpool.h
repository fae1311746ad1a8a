/*
 * strpool — strings interned by content: one copy per distinct string, an
 * index per string in insertion order, and stable pointers until
 * strpool_free.
 *
 * Indexed by hashidx on an FNV-1a hash. The pool owns
 * its copies. Zero-initialise a struct strpool before the first call.
 * Used for the pprof string table and speedscope frames (export), a loaded
 * profile's names (report) and the symbolizer's names (sym).
 *
 * Counted use (strpool_ref, strpool_unref): a string taken with
 * strpool_ref is freed when its last reference is dropped, and its index
 * is reused by a later string. Names chosen by a target (JIT names, frames)
 * live this way only while something holds them. A pool is used either
 * counted or not: strpool_index's order promise is for pools never unref'd.
 * A freed string's bytes go back to the pool, not to malloc: they are kept
 * for a later string of the same size class (powers of two), so a stale
 * copy of a pointer (a paused view's row) reads some NUL-terminated name,
 * never freed memory; the pool's size is bounded by its peak, not its
 * history.
 */
#ifndef STACKTOP_STRPOOL_H
#define STACKTOP_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "stacktop/lib/hashidx.h"

struct strpool {
	char **s; /* s[i]: the i-th distinct string (NULL: freed, on the free list) */
	size_t n, cap;
	struct hashidx ix; /* content → index */
	uint32_t *refs;	   /* counted pools: references per index (NULL until strpool_ref) */
	size_t refs_cap;
	uint32_t *free_ids; /* freed indices, reused first */
	size_t nfree, free_cap;
	struct strpool_spare *spare; /* counted pools: freed buffers by size class */
};

/* Index of the n bytes at s (no NUL inside), added when new; -ENOMEM. */
int64_t strpool_index(struct strpool *p, const char *s, size_t n);
/* The pool's copy of the n bytes at s, or NULL on ENOMEM. */
const char *strpool_str(struct strpool *p, const char *s, size_t n);
/* The same for a NUL-terminated string. */
const char *strpool_cstr(struct strpool *p, const char *s);
void strpool_free(struct strpool *p);
/* The pool's copy of the NUL-terminated s with one more reference, or NULL
 * on ENOMEM. Each strpool_ref is paired with one strpool_unref. */
const char *strpool_ref(struct strpool *p, const char *s);
/* Drop a reference to s (a pointer strpool_ref returned; NULL is a no-op):
 * at the last one the copy is freed. */
void strpool_unref(struct strpool *p, const char *s);
/* Distinct strings held now (freed ones not counted). */
size_t strpool_live(const struct strpool *p);
/* FNV-1a of n bytes. */
uint64_t strpool_hash(const char *s, size_t n);

#endif
