/*
 * array — growing arrays.
 *
 * array_grow makes room for at least need elements of elem bytes in *arr,
 * doubling its capacity (from 64), so appending one at a time is amortised
 * O(1). The caller owns *arr and frees it. 0, or -ENOMEM with *arr and *cap
 * unchanged.
 *
 * array_upper_bound searches an array sorted by a uint64_t key held in each
 * element (a range's start); array_push_name appends a string to a names
 * buffer whose users keep 32-bit offsets into it. Both leave ownership
 * with the caller.
 */
#ifndef STACKTOP_ARRAY_H
#define STACKTOP_ARRAY_H

#include <stddef.h>
#include <stdint.h>

int array_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* Room for element n (one past the n in use) through array_grow, and that
 * element zeroed: its address, or NULL (-ENOMEM) with *arr unchanged. The
 * caller counts it in use. */
void *array_slot(void **arr, size_t *cap, size_t n, size_t elem);

/* In an array of n elements of size bytes sorted by the uint64_t at offset
 * off (their start), the number of elements starting at or below key: the
 * last one that may hold key is at the result - 1. */
size_t array_upper_bound(const void *arr, size_t n, size_t size, size_t off, uint64_t key);

/* array_upper_bound of key in an array of structs with a uint64_t start. */
#define ARRAY_STARTS_AT_OR_BELOW(arr, n, key)                                                      \
	array_upper_bound((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), start), (key))

/* Append the string s to a names buffer (*buf, *len bytes used of *cap)
 * and say where it starts: tables keep 32-bit offsets, not pointers, so the
 * buffer may move while it grows. 0, -E2BIG past 4 GiB, or -ENOMEM. */
int array_push_name(char **buf, size_t *len, size_t *cap, const char *s, uint32_t *off);

/* -1, 0 or 1 as a is below, equal to or above b (numbers): a comparator's
 * step, chained with ?: (ARRAY_CMP(y->n, x->n) ?: ... sorts by n down). */
#define ARRAY_CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* free() each of n pointers; ARRAY_FREE_ALL(a, b, c) frees a, b and c, the
 * release of a struct's arrays in one statement. */
void array_free_all(void *const *ptrs, size_t n);
#define ARRAY_FREE_ALL(...)                                                                        \
	array_free_all((void *const[]){__VA_ARGS__},                                               \
		       sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif
