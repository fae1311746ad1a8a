/*
 * strpool — strings interned by content (see strpool.h).
 *
 * Strings live in insertion order in s[]; the hash index only points into
 * it, so indices never change: the pprof string table relies on index 0
 * being the first string added (""). A counted pool (strpool_ref) drops a
 * string at its last unref, leaving a hole in s[] that the next new string
 * fills; its buffer waits in spare for a string of its size class.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"

/* Freed buffers of a counted pool, by size class (class k: 1 << k bytes). */
#define STRPOOL_CLASSES 48
struct strpool_spare {
	char **buf[STRPOOL_CLASSES];
	size_t n[STRPOOL_CLASSES], cap[STRPOOL_CLASSES];
};

static unsigned size_class(size_t bytes)
{
	unsigned k = 4;

	while (k < STRPOOL_CLASSES - 1 && ((size_t)1 << k) < bytes)
		k++;
	return k;
}

/* A copy of the n bytes at s: a spare buffer of its class when a counted
 * pool has one (buffers are never shorter than their class). */
static char *pool_copy(struct strpool *p, const char *s, size_t n)
{
	unsigned k;
	char *c;

	if (!p->refs)
		return strndup(s, n);
	k = size_class(n + 1);
	if (p->spare && p->spare->n[k])
		c = p->spare->buf[k][--p->spare->n[k]];
	else if (!(c = malloc((size_t)1 << k)))
		return NULL;
	memcpy(c, s, n);
	c[n] = '\0';
	return c;
}

/* Keep a counted pool's freed buffer for reuse (see strpool.h); false when
 * there is no room to remember it. */
static bool pool_keep(struct strpool *p, char *c)
{
	unsigned k = size_class(strlen(c) + 1);

	if (!p->spare && !(p->spare = calloc(1, sizeof(*p->spare))))
		return false;
	if (array_grow((void **)&p->spare->buf[k], &p->spare->cap[k], p->spare->n[k] + 1,
		       sizeof(char *)))
		return false;
	p->spare->buf[k][p->spare->n[k]++] = c;
	return true;
}

uint64_t strpool_hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a offset basis */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static bool strpool_hash_of(const void *ctx, uint32_t i, uint64_t *h)
{
	const struct strpool *p = ctx;

	if (!p->s[i])
		return false; /* freed: not indexed */
	*h = strpool_hash(p->s[i], strlen(p->s[i]));
	return true;
}

struct strpool_key {
	const char *s;
	size_t n;
};

static bool strpool_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct strpool *p = ctx;
	const struct strpool_key *k = key;
	const char *t = p->s[i];

	return !strncmp(t, k->s, k->n) && t[k->n] == '\0';
}

int64_t strpool_index(struct strpool *p, const char *s, size_t n)
{
	struct strpool_key k = {s, n};
	int64_t i;
	size_t j, id;
	char *c;

	if (hashidx_reserve(&p->ix, p->n - p->nfree, p->n, 256, strpool_hash_of, p))
		return -ENOMEM;
	if ((i = hashidx_find(&p->ix, strpool_hash(s, n), strpool_eq, p, &k, &j)) >= 0)
		return i;
	if (!p->nfree && array_grow((void **)&p->s, &p->cap, p->n + 1, sizeof(*p->s)))
		return -ENOMEM;
	if (p->refs && !p->nfree &&
	    array_grow((void **)&p->refs, &p->refs_cap, p->n + 1, sizeof(*p->refs)))
		return -ENOMEM;
	if (!(c = pool_copy(p, s, n)))
		return -ENOMEM;
	id = p->nfree ? p->free_ids[--p->nfree] : p->n++;
	p->s[id] = c;
	if (p->refs)
		p->refs[id] = 0;
	hashidx_set(&p->ix, j, (uint32_t)id);
	return (int64_t)id;
}

const char *strpool_str(struct strpool *p, const char *s, size_t n)
{
	int64_t i = strpool_index(p, s, n);
	return i < 0 ? NULL : p->s[i];
}

const char *strpool_cstr(struct strpool *p, const char *s)
{
	return strpool_str(p, s, strlen(s));
}

const char *strpool_ref(struct strpool *p, const char *s)
{
	int64_t i;

	/* The counts start with the pool's first counted string (all zero:
	 * strings added before were never counted). */
	if (!p->refs && p->n == 0 &&
	    array_grow((void **)&p->refs, &p->refs_cap, 16, sizeof(*p->refs)))
		return NULL;
	if (!p->refs)
		return NULL; /* a pool of uncounted strings cannot start counting */
	if ((i = strpool_index(p, s, strlen(s))) < 0)
		return NULL;
	if (p->refs[i] < UINT32_MAX)
		p->refs[i]++;
	return p->s[i];
}

static bool strpool_same_ptr(const void *ctx, uint32_t i, const void *key)
{
	return ((const struct strpool *)ctx)->s[i] == key;
}

void strpool_unref(struct strpool *p, const char *s)
{
	int64_t i;
	size_t j;

	if (!s || !p->refs)
		return;
	i = hashidx_find(&p->ix, strpool_hash(s, strlen(s)), strpool_same_ptr, p, s, &j);
	if (i < 0 || !p->refs[i] || --p->refs[i])
		return;
	/* Grows by at most one per freed index: never more than n. */
	if (array_grow((void **)&p->free_ids, &p->free_cap, p->nfree + 1, sizeof(*p->free_ids)) ||
	    !pool_keep(p, p->s[i])) {
		p->refs[i] = 1; /* the string stays: a leak of one name, not an error */
		return;
	}
	hashidx_unslot(&p->ix, j, strpool_hash_of, p);
	p->s[i] = NULL;
	p->free_ids[p->nfree++] = (uint32_t)i;
}

size_t strpool_live(const struct strpool *p)
{
	return p->n - p->nfree;
}

void strpool_free(struct strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	for (unsigned k = 0; p->spare && k < STRPOOL_CLASSES; k++) {
		for (size_t i = 0; i < p->spare->n[k]; i++)
			free(p->spare->buf[k][i]);
		free(p->spare->buf[k]);
	}
	free(p->spare);
	free(p->refs);
	free(p->free_ids);
	hashidx_free(&p->ix);
	memset(p, 0, sizeof(*p));
}
