/*
 * strpool — strings interned by content (see strpool.h).
 *
 * Rehashing walks the strings in index order, so indices never change: the
 * pprof string table relies on index 0 being the first string added ("").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/mem.h"
#include "stacktop/strpool.h"

uint64_t strpool_hash(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a offset basis */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int strpool_rehash(struct strpool *p)
{
	size_t nslots = p->slot ? (p->mask + 1) * 2 : 256;
	uint32_t *slot = calloc(nslots, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		size_t j = strpool_hash(p->s[i], strlen(p->s[i])) & (nslots - 1);
		while (slot[j])
			j = (j + 1) & (nslots - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(p->slot);
	p->slot = slot;
	p->mask = nslots - 1;
	return 0;
}

int64_t strpool_index(struct strpool *p, const char *s, size_t n)
{
	size_t j;
	char *c;

	if ((!p->slot || (p->n + 1) * 2 > p->mask + 1) && strpool_rehash(p))
		return -ENOMEM;
	for (j = strpool_hash(s, n) & p->mask; p->slot[j]; j = (j + 1) & p->mask) {
		const char *t = p->s[p->slot[j] - 1];
		if (!strncmp(t, s, n) && t[n] == '\0')
			return p->slot[j] - 1;
	}
	if (mem_grow((void **)&p->s, &p->cap, p->n + 1, sizeof(*p->s)))
		return -ENOMEM;
	if (!(c = strndup(s, n)))
		return -ENOMEM;
	p->s[p->n] = c;
	p->slot[j] = (uint32_t)p->n + 1;
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
	free(p->slot);
	memset(p, 0, sizeof(*p));
}
