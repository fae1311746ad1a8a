/*
 * test_memhold — address ranges → the stack that created them: a leak
 * outranks a churner that maps and unmaps far more; an unmap by anyone
 * takes the bytes from the creator; partial unmaps split regions; a
 * MAP_FIXED map over an old range replaces it; mremap moves the bytes to
 * the mremap's caller; brk growth and shrink; held bytes created before
 * the window do not count as the window's; sampled maps stand for their
 * weight; faults counted per stack in the window; stacks holding nothing
 * are dropped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/memory/memhold.h"

#define SEC 1000000000ull
#define MIB (1ull << 20)

static int stack(struct memhold *h, uint32_t a, uint32_t b)
{
	uint32_t f[2] = {a, b};
	int s = memhold_stack(h, f, 2);
	assert_true(s >= 0);
	return s;
}

static const struct memhold_row *row_of(const struct memhold_row *r, int n, int s)
{
	for (int i = 0; i < n; i++)
		if (r[i].stack == s)
			return &r[i];
	return NULL;
}

/* A new tracker of window_ns (its stacks have no frames table). */
static struct memhold *opened(uint64_t window_ns)
{
	struct memhold *h;

	assert_int_equal(memhold_new(NULL, window_ns, &h), 0);
	return h;
}

/* memhold_rank at now, which must give want rows (free them). */
static struct memhold_row *ranked(struct memhold *h, uint64_t now, int want)
{
	struct memhold_row *r;
	int n;

	assert_int_equal(memhold_rank(h, now, &r, &n), 0);
	assert_int_equal(n, want);
	return r;
}

/* The bytes stack s holds, ranked at now into want rows (-1: no row). */
static int64_t held_by(struct memhold *h, uint64_t now, int want, int s)
{
	struct memhold_row *r = ranked(h, now, want);
	const struct memhold_row *x = row_of(r, want, s);
	int64_t held = x ? (int64_t)x->held : -1;

	free(r);
	return held;
}

static struct memhold_stats stats_of(struct memhold *h)
{
	struct memhold_stats st;

	memhold_stats(h, &st);
	return st;
}

static void test_leak_outranks_churn(void **state)
{
	struct memhold *h = opened(60 * SEC);
	struct memhold_row *r;
	int leak = stack(h, 1, 2), churn = stack(h, 1, 3);
	assert_int_equal(stack(h, 1, 2), leak); /* interned */
	uint64_t t = SEC;
	for (int i = 0; i < 100; i++, t += SEC / 10) {
		/* The same address again and again: the churner's. */
		assert_int_equal(memhold_map(h, 0x10000000, 4 * MIB, churn, t), 0);
		assert_int_equal(memhold_map(h, 0x40000000 + (uint64_t)i * MIB, 256 << 10, leak, t),
				 0);
		memhold_unmap(h, 0x10000000, 4 * MIB);
	}
	r = ranked(h, t, 1); /* the churner holds nothing: dropped */
	assert_int_equal(r[0].stack, leak);
	assert_int_equal(r[0].held, 100 * (256 << 10));
	assert_int_equal(r[0].held_window, 100 * (256 << 10));
	free(r);
	struct memhold_stats st = stats_of(h);
	assert_int_equal(st.regions, 100);
	assert_int_equal(st.unknown_unmapped, 0);
	assert_int_equal(st.stacks, 1);
	memhold_free(h);
}

static void test_partial_unmap_and_fixed(void **state)
{
	struct memhold *h = opened(60 * SEC);
	int a = stack(h, 1, 2), b = stack(h, 1, 3);
	assert_int_equal(memhold_map(h, 0x100000, 10 * 4096, a, SEC), 0);
	/* A hole in the middle, by someone else. */
	memhold_unmap(h, 0x100000 + 2 * 4096, 3 * 4096);
	/* The head trimmed, with some never-mapped bytes before it. */
	memhold_unmap(h, 0x100000 - 4096, 2 * 4096);
	/* MAP_FIXED by b over the tail. */
	assert_int_equal(memhold_map(h, 0x100000 + 8 * 4096, 4 * 4096, b, SEC), 0);
	assert_int_equal(held_by(h, 2 * SEC, 2, a), 4 * 4096); /* pages 1, 5, 6, 7 */
	assert_int_equal(held_by(h, 2 * SEC, 2, b), 4 * 4096);
	struct memhold_stats st = stats_of(h);
	assert_int_equal(st.regions, 3);
	assert_int_equal(st.unknown_unmapped, 4096);
	memhold_free(h);
}

static void test_remap_brk(void **state)
{
	struct memhold *h = opened(60 * SEC);
	int a = stack(h, 1, 2), grow = stack(h, 1, 4), heap = stack(h, 1, 5);
	assert_int_equal(memhold_map(h, 0x200000, MIB, a, SEC), 0);
	assert_int_equal(memhold_remap(h, 0x200000, MIB, 0x800000, 3 * MIB, grow, SEC), 0);
	memhold_brk_start(h, 0x5000000);
	assert_int_equal(memhold_brk(h, 0x5000000 + 2 * MIB, heap, SEC), 0);
	assert_int_equal(memhold_brk(h, 0x5000000 + MIB, heap, SEC), 0); /* shrink */
	assert_int_equal(held_by(h, 2 * SEC, 2, a), -1);
	assert_int_equal(held_by(h, 2 * SEC, 2, grow), 3 * MIB);
	assert_int_equal(held_by(h, 2 * SEC, 2, heap), MIB);
	memhold_free(h);
	/* Without a known start, the first brk only learns where the heap ends. */
	h = opened(60 * SEC);
	heap = stack(h, 1, 5);
	assert_int_equal(memhold_brk(h, 0x5000000, heap, SEC), 0);
	assert_int_equal(memhold_brk(h, 0x5000000 + MIB, heap, SEC), 0);
	assert_int_equal(held_by(h, 2 * SEC, 1, heap), MIB);
	memhold_free(h);
}

static void test_window_weight_faults(void **state)
{
	struct memhold *h = opened(10 * SEC);
	struct memhold_row *r;
	int old = stack(h, 1, 2), fresh = stack(h, 1, 3), toucher = stack(h, 1, 6);
	assert_int_equal(memhold_map(h, 0x1000000, 8 * MIB, old, SEC), 0);
	memhold_set_weight(h, 8);
	assert_int_equal(memhold_map(h, 0x9000000, MIB, fresh, 50 * SEC), 0);
	memhold_set_weight(h, 1);
	for (int i = 0; i < 5; i++)
		memhold_fault(h, toucher, 64, 52 * SEC);
	memhold_fault(h, toucher, 64, 30 * SEC); /* before the window */
	r = ranked(h, 55 * SEC, 3);
	assert_int_equal(r[0].stack, fresh); /* 8 MiB of the window beats 8 MiB before it */
	assert_int_equal(r[0].held, 8 * MIB);
	assert_int_equal(r[0].held_window, 8 * MIB);
	assert_int_equal(r[1].stack, toucher);
	assert_int_equal(r[1].faults, 5 * 64);
	assert_int_equal(r[1].held, 0);
	assert_int_equal(r[2].stack, old);
	assert_int_equal(r[2].held_window, 0);
	free(r);
	/* A sampled region unmapped takes back all it stood for. */
	memhold_unmap(h, 0x9000000, MIB);
	r = ranked(h, 80 * SEC, 1);
	assert_int_equal(r[0].stack, old);
	free(r);
	memhold_free(h);
}

/* munmap records lost: the next smaps snapshot says what is still mapped;
 * regions made after the snapshot began are left alone. */
static void test_reconcile(void **state)
{
	struct memhold *h = opened(60 * SEC);
	int a = stack(h, 1, 2), b = stack(h, 1, 3);
	assert_int_equal(memhold_map(h, 0x100000, 16 * 4096, a, SEC), 0);
	assert_int_equal(memhold_map(h, 0x200000, 4 * 4096, b, SEC), 0);
	assert_int_equal(memhold_map(h, 0x300000, 4 * 4096, b, 9 * SEC), 0); /* after the read */
	const uint64_t maps[][2] = {
	    {0x0f0000, 0x100000 + 2 * 4096},		/* a's first two pages */
	    {0x100000 + 4 * 4096, 0x100000 + 6 * 4096}, /* pages 4, 5 */
	    {0x100000 + 15 * 4096, 0x180000},		/* the last page, and more */
	};
	assert_int_equal(memhold_reconcile(h, maps, 3, 5 * SEC), (11 + 4) * 4096);
	assert_int_equal(held_by(h, 10 * SEC, 2, a), 5 * 4096);
	assert_int_equal(held_by(h, 10 * SEC, 2, b), 4 * 4096);
	struct memhold_stats st = stats_of(h);
	assert_int_equal(st.reconciled, 15 * 4096);
	assert_int_equal(st.unknown_unmapped, 0);
	assert_int_equal(memhold_reconcile(h, maps, 0, 5 * SEC), 5 * 4096); /* nothing mapped */
	memhold_free(h);
}

static void test_bad_input(void **state)
{
	struct memhold *h = opened(SEC);
	uint32_t f[MEMHOLD_MAX_FRAMES + 1] = {0};
	assert_int_equal(memhold_stack(h, f, MEMHOLD_MAX_FRAMES + 1), -EINVAL);
	int s = memhold_stack(h, f, 0);
	assert_true(s >= 0);
	assert_int_equal(memhold_map(h, 0x1000, 0, s, 1), -EINVAL);
	assert_int_equal(memhold_map(h, UINT64_MAX - 10, 4096, s, 1), -EINVAL);
	assert_int_equal(memhold_map(h, 0x1000, 4096, 99, 1), -EINVAL);
	memhold_unmap(h, UINT64_MAX - 10, 4096);
	memhold_fault(h, 12345, 1, 1);
	memhold_free(h);
}

/* held bytes of stack s, from memhold_rank */
static uint64_t held_of(struct memhold *h, int s, uint64_t now)
{
	struct memhold_row *r;
	int n;
	uint64_t held = 0;

	assert_int_equal(memhold_rank(h, now, &r, &n), 0);
	const struct memhold_row *x = row_of(r, n, s);
	if (x)
		held = x->held;
	free(r);
	return held;
}

/* Random maps and unmaps over 4,096 pages against a page-by-page model:
 * every stack holds exactly the pages the model says (thousands of
 * regions, so chunks fill, split and empty). */
static void test_random_against_pages(void **state)
{
	enum { PAGES = 4096, PAGE = 4096, STACKS = 4 };
	static int8_t owner[PAGES];
	struct memhold *h = opened(3600 * SEC);
	int sk[STACKS];
	uint64_t seed = 88172645463325252ull, base = 0x7f0000000000ull;

	for (int i = 0; i < STACKS; i++)
		sk[i] = stack(h, 9, (uint32_t)i);
	memset(owner, -1, sizeof(owner));
	for (int op = 0; op < 20000; op++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		size_t p = seed % PAGES, len = 1 + (seed >> 20) % (op % 7 ? 3 : 200);
		int who = (int)((seed >> 40) % STACKS);

		if (p + len > PAGES)
			len = PAGES - p;
		if ((seed >> 50) % 3) {
			assert_int_equal(memhold_map(h, base + p * PAGE, len * PAGE, sk[who], SEC),
					 0);
			memset(&owner[p], who, len);
		} else {
			memhold_unmap(h, base + p * PAGE, len * PAGE);
			memset(&owner[p], -1, len);
		}
	}
	for (int i = 0; i < STACKS; i++) {
		uint64_t pages = 0;

		for (size_t p = 0; p < PAGES; p++)
			pages += owner[p] == i;
		assert_int_equal(held_of(h, sk[i], 2 * SEC), pages * PAGE);
	}
	memhold_unmap(h, base, (uint64_t)PAGES * PAGE);
	assert_int_equal(stats_of(h).regions, 0);
	memhold_free(h);
}

/* 400,000 mappings handed out downwards (as mmap does), then one munmap
 * over all of them: the regions moved to keep the order grow with n (at
 * most a chunk, 256, per insert), not with n squared (one sorted array
 * moved ~8e10, 82 s). */
static void test_many_regions_cost(void **state)
{
	enum { N = 400000 };
	struct memhold *h = opened(60 * SEC);
	uint64_t top = 0x7f0000000000ull;

	int s = stack(h, 1, 2);
	for (uint64_t i = 1; i <= N; i++) /* gaps between them: no two merge */
		assert_int_equal(memhold_map(h, top - i * 0x3000, 0x1000, s, SEC), 0);
	assert_int_equal(stats_of(h).regions, N);
	memhold_unmap(h, top - (uint64_t)N * 0x3000, (uint64_t)N * 0x3000);
	struct memhold_stats st = stats_of(h);
	assert_int_equal(st.regions, 0);
	assert_int_equal(held_of(h, s, 2 * SEC), 0);
	assert_true(st.moves <= 256ull * N);
	memhold_free(h);
}

TEST_MAIN(NULL, NULL, TEST(test_leak_outranks_churn), TEST(test_partial_unmap_and_fixed),
	  TEST(test_remap_brk), TEST(test_window_weight_faults), TEST(test_reconcile),
	  TEST(test_bad_input), TEST(test_random_against_pages), TEST(test_many_regions_cost))
