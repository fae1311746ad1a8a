/*
 * hashidx — an open-addressing hash index over a caller's compact array.
 *
 * The caller keeps its entries in an array of its own, numbered by id
 * (0, 1, ...); the index maps a key to an id. Slots hold id + 1 (0 =
 * empty), probing is linear, and hashidx_reserve keeps the table at most
 * half full, doubling it (from min_slots) and rebuilding it from the ids
 * when it would pass that. Deletion shifts later members of the cluster
 * back (no tombstones), so lookups stay exact after any mix of adds and
 * removes.
 *
 * The index never stores hashes or keys: the caller hands in a hash
 * function (id → hash, false for ids that are not indexed, such as free
 * entries) for rebuilding and deleting, and an equality function for
 * lookups. hashidx_find is inline so the compiler can inline both.
 *
 * Contract: zero-initialise a struct hashidx; reserve
 * before every insert; hashidx_free releases the table. Used by frames,
 * window, strpool, icicle and the pprof and speedscope formats.
 */
#ifndef STACKTOP_HASHIDX_H
#define STACKTOP_HASHIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashidx {
	uint32_t *slot; /* id + 1, 0 = empty */
	size_t mask;	/* nslots - 1; 0 while slot == NULL */
};

/* The hash of id into *hash; false when id is not in the index. */
typedef bool (*hashidx_hash_fn)(const void *ctx, uint32_t id, uint64_t *hash);
/* True when entry id has the key the lookup asks for. */
typedef bool (*hashidx_eq_fn)(const void *ctx, uint32_t id, const void *key);

/* Room for one more id in an index that holds nused ids out of [0, n):
 * when it would pass half full, rebuild it over twice the slots (min_slots,
 * a power of two, the first time). 0, or -ENOMEM with the index unchanged.
 * Slot numbers found before a reserve are stale after it. */
int hashidx_reserve(struct hashidx *ix, size_t nused, size_t n, size_t min_slots,
		    hashidx_hash_fn hash, const void *ctx);

/* Index id under hash h (h's key must not be in the index yet). Needs a
 * reserve first. */
void hashidx_put(struct hashidx *ix, uint64_t h, uint32_t id);

/* Index id at slot, an empty slot hashidx_find just gave for its key. */
static inline void hashidx_set(struct hashidx *ix, size_t slot, uint32_t id)
{
	ix->slot[slot] = id + 1;
}

/* The slot that holds id (indexed under hash h), or SIZE_MAX. */
size_t hashidx_slot_of(const struct hashidx *ix, uint64_t h, uint32_t id);

/* Empty slot i, shifting back later members of its cluster that would
 * otherwise become unreachable. */
void hashidx_unslot(struct hashidx *ix, size_t i, hashidx_hash_fn hash, const void *ctx);

/* Forget every id, keeping the table. */
void hashidx_clear(struct hashidx *ix);
void hashidx_free(struct hashidx *ix);

/* splitmix64's finaliser: spreads a key's bits over the whole word. */
static inline uint64_t hashidx_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* The id whose entry eq() matches key, probing from hash h, or -1. *slotp
 * (may be NULL) gets the slot it is in, or else the empty slot where it
 * belongs (valid until the next reserve). An index without a table finds
 * nothing and leaves *slotp at 0. */
static inline int64_t hashidx_find(const struct hashidx *ix, uint64_t h, hashidx_eq_fn eq,
				   const void *ctx, const void *key, size_t *slotp)
{
	size_t j = 0;
	uint32_t s;

	if (ix->slot)
		for (j = h & ix->mask; (s = ix->slot[j]); j = (j + 1) & ix->mask)
			if (eq(ctx, s - 1, key)) {
				if (slotp)
					*slotp = j;
				return (int64_t)s - 1;
			}
	if (slotp)
		*slotp = j;
	return -1;
}

#endif
