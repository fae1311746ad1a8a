/*
 * strpool — strings interned by content (see strpool.h).
 *
 * Strings live in insertion order in s[]; the hash index only points into
 * it, so indices never change: the pprof string table relies on index 0
 * being the first string added ("").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"

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
	size_t j;
	char *c;

	if (hashidx_reserve(&p->ix, p->n, p->n, 256, strpool_hash_of, p))
		return -ENOMEM;
	if ((i = hashidx_find(&p->ix, strpool_hash(s, n), strpool_eq, p, &k, &j)) >= 0)
		return i;
	if (array_grow((void **)&p->s, &p->cap, p->n + 1, sizeof(*p->s)))
		return -ENOMEM;
	if (!(c = strndup(s, n)))
		return -ENOMEM;
	p->s[p->n] = c;
	hashidx_set(&p->ix, j, (uint32_t)p->n);
	return (int64_t)p->n++;
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

void strpool_free(struct strpool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	hashidx_free(&p->ix);
	memset(p, 0, sizeof(*p));
}
