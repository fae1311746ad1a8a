/*
 * array — growing arrays (see array.h). One copy of the doubling rule that the
 * window and the pprof writer both use.
 */
#include <errno.h>
#include <stdlib.h>

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
