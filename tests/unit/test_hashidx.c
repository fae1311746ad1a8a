/* Unit tests for hashidx: lookups over a caller's array, growth that keeps
 * every id findable, ids left out of a rebuild, backward-shift deletion
 * that keeps colliding keys reachable, clear and free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/hashidx.h"

/* The caller's side: keys in an array, a hash that can be made to collide
 * (hash = key / spread) and a flag for entries that are not indexed. */
struct tab {
	uint64_t key[4096];
	bool gone[4096];
	size_t n;
	uint64_t spread;
	struct hashidx ix;
};

static bool tab_hash(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct tab *t = ctx;

	*h = t->key[id] / t->spread;
	return !t->gone[id];
}

static bool tab_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const struct tab *)ctx)->key[id] == *(const uint64_t *)key;
}

static int64_t tab_find(const struct tab *t, uint64_t k)
{
	return hashidx_find(&t->ix, k / t->spread, tab_eq, t, &k, NULL);
}

static void tab_add(struct tab *t, uint64_t k)
{
	assert_int_equal(hashidx_reserve(&t->ix, t->n, t->n, 8, tab_hash, t), 0);
	t->key[t->n] = k;
	hashidx_put(&t->ix, k / t->spread, (uint32_t)t->n++);
}

static void tab_remove(struct tab *t, uint64_t k)
{
	int64_t id = tab_find(t, k);
	size_t s;

	assert_true(id >= 0);
	s = hashidx_slot_of(&t->ix, k / t->spread, (uint32_t)id);
	assert_int_not_equal(s, SIZE_MAX);
	hashidx_unslot(&t->ix, s, tab_hash, t);
	t->gone[id] = true;
}

static void test_empty_index_finds_nothing(void **state)
{
	struct hashidx ix = {0};
	uint64_t k = 7;
	size_t slot = 99;

	assert_int_equal(hashidx_find(&ix, 7, tab_eq, NULL, &k, &slot), -1);
	assert_int_equal(slot, 0);
	assert_int_equal(hashidx_slot_of(&ix, 7, 0), SIZE_MAX);
	hashidx_clear(&ix);
	hashidx_free(&ix);
	assert_null(ix.slot);
}

static void test_growth_keeps_ids(void **state)
{
	static struct tab t = {.spread = 1};
	size_t i;

	for (i = 0; i < 3000; i++)
		tab_add(&t, i * 7919 + 1);
	/* At most half full, a power of two. */
	assert_true((t.ix.mask + 1) >= 2 * t.n);
	assert_int_equal((t.ix.mask + 1) & t.ix.mask, 0);
	for (i = 0; i < 3000; i++)
		assert_int_equal(tab_find(&t, i * 7919 + 1), (int64_t)i);
	assert_int_equal(tab_find(&t, 2), -1);
	hashidx_free(&t.ix);
}

static void test_find_gives_insert_slot(void **state)
{
	static struct tab t = {.spread = 1};
	uint64_t k = 42;
	size_t slot;

	tab_add(&t, 5);
	assert_int_equal(hashidx_reserve(&t.ix, t.n, t.n, 8, tab_hash, &t), 0);
	assert_int_equal(hashidx_find(&t.ix, k, tab_eq, &t, &k, &slot), -1);
	assert_int_equal(t.ix.slot[slot], 0);
	t.key[t.n] = k;
	hashidx_set(&t.ix, slot, (uint32_t)t.n++);
	assert_int_equal(tab_find(&t, 42), 1);
	assert_int_equal(hashidx_find(&t.ix, k, tab_eq, &t, &k, &slot), 1);
	assert_int_equal(t.ix.slot[slot], 2);
	hashidx_free(&t.ix);
}

static void test_unslot_keeps_cluster_reachable(void **state)
{
	/* spread 1000: keys 0..999 share hash 0, so they form one cluster
	 * that wraps around the end of the table. */
	static struct tab t = {.spread = 1000};
	size_t i;

	for (i = 0; i < 40; i++)
		tab_add(&t, i * 37 % 1000);
	/* Remove every third one, from the front and the middle of the run. */
	for (i = 0; i < 40; i += 3)
		tab_remove(&t, i * 37 % 1000);
	for (i = 0; i < 40; i++)
		assert_int_equal(tab_find(&t, i * 37 % 1000), i % 3 ? (int64_t)i : -1);
	/* A rebuild leaves the removed ones out. */
	for (i = 40; i < 200; i++)
		tab_add(&t, 5000 + i);
	for (i = 0; i < 40; i++)
		assert_int_equal(tab_find(&t, i * 37 % 1000), i % 3 ? (int64_t)i : -1);
	for (i = 40; i < 200; i++)
		assert_int_equal(tab_find(&t, 5000 + i), (int64_t)i);
	hashidx_free(&t.ix);
}

static void test_unslot_wraps(void **state)
{
	/* All keys hash to the last slot of a 16-slot table: the cluster
	 * wraps to slot 0 and deletion must shift across the wrap. */
	static struct tab t = {.spread = 1};
	size_t i;

	assert_int_equal(hashidx_reserve(&t.ix, 7, 0, 16, tab_hash, &t), 0);
	assert_int_equal(t.ix.mask, 15);
	for (i = 0; i < 5; i++) {
		t.key[t.n] = 15 + 16 * i;
		hashidx_put(&t.ix, t.key[t.n], (uint32_t)t.n);
		t.n++;
	}
	assert_int_equal(t.ix.slot[15], 1);
	assert_int_equal(t.ix.slot[0], 2);
	tab_remove(&t, 15);
	assert_int_equal(t.ix.slot[15], 2);
	for (i = 1; i < 5; i++)
		assert_int_equal(tab_find(&t, 15 + 16 * i), (int64_t)i);
	assert_int_equal(tab_find(&t, 15), -1);
	hashidx_clear(&t.ix);
	for (i = 0; i < 5; i++)
		assert_int_equal(tab_find(&t, 15 + 16 * i), -1);
	hashidx_free(&t.ix);
}

static void test_mix64(void **state)
{
	/* splitmix64 finaliser reference values. */
	assert_int_equal(hashidx_mix64(0), 0);
	assert_int_not_equal(hashidx_mix64(1), hashidx_mix64(2));
	assert_int_equal(hashidx_mix64(1), 0x5692161d100b05e5ull);
}

TEST_MAIN(NULL, NULL, TEST(test_empty_index_finds_nothing), TEST(test_growth_keeps_ids),
	  TEST(test_find_gives_insert_slot), TEST(test_unslot_keeps_cluster_reachable),
	  TEST(test_unslot_wraps), TEST(test_mix64))
