/*
 * array — growing arrays (see array.h). One copy of the doubling rule that the
 * window and the pprof writer both use; the binary search and the names
 * buffer the symbol tables (sym, perfmap, kallsyms, fde) share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"

int array_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	void *p;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	if (!(p = realloc(*arr, nc * elem)))
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

void *array_slot(void **arr, size_t *cap, size_t n, size_t elem)
{
	char *slot;

	if (array_grow(arr, cap, n + 1, elem))
		return NULL;
	slot = (char *)*arr + n * elem;
	memset(slot, 0, elem);
	return slot;
}

size_t array_upper_bound(const void *arr, size_t n, size_t size, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&start, (const char *)arr + mid * size + off, sizeof(start));
		if (start <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int array_push_name(char **buf, size_t *len, size_t *cap, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (*len + n > UINT32_MAX)
		return -E2BIG;
	if (array_grow((void **)buf, cap, *len + n, 1))
		return -ENOMEM;
	memcpy(*buf + *len, s, n);
	*off = (uint32_t)*len;
	*len += n;
	return 0;
}

void array_free_all(void *const *ptrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
}
