/*
 * array — growing arrays.
 *
 * array_grow makes room for at least need elements of elem bytes in *arr,
 * doubling its capacity (from 64), so appending one at a time is amortised
 * O(1). The caller owns *arr and frees it. 0, or -ENOMEM with *arr and *cap
 * unchanged.
 */
#ifndef STACKTOP_ARRAY_H
#define STACKTOP_ARRAY_H

#include <stddef.h>

int array_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
