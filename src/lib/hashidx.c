/*
 * hashidx — the open-addressing index shared by the tables that intern
 * things by key (see hashidx.h). One copy of the probe, the rebuild and the
 * backward-shift deletion that frames, window, strpool and icicle each
 * used to carry.
 */
#include "stacktop/lib/hashidx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hashidx_reserve(struct hashidx *ix, size_t nused, size_t n, size_t min_slots,
		    hashidx_hash_fn hash, const void *ctx)
{
	size_t nslots = ix->slot ? ix->mask + 1 : 0, i, j;
	uint64_t h;
	uint32_t *s;

	if ((nused + 1) * 2 <= nslots)
		return 0;
	nslots = nslots ? nslots * 2 : min_slots;
	if (!(s = calloc(nslots, sizeof(*s))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!hash(ctx, (uint32_t)i, &h))
			continue;
		j = h & (nslots - 1);
		while (s[j])
			j = (j + 1) & (nslots - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(ix->slot);
	ix->slot = s;
	ix->mask = nslots - 1;
	return 0;
}

void hashidx_put(struct hashidx *ix, uint64_t h, uint32_t id)
{
	size_t j = h & ix->mask;

	while (ix->slot[j])
		j = (j + 1) & ix->mask;
	ix->slot[j] = id + 1;
}

size_t hashidx_slot_of(const struct hashidx *ix, uint64_t h, uint32_t id)
{
	size_t j;

	if (!ix->slot)
		return SIZE_MAX;
	for (j = h & ix->mask; ix->slot[j]; j = (j + 1) & ix->mask)
		if (ix->slot[j] == id + 1)
			return j;
	return SIZE_MAX;
}

void hashidx_unslot(struct hashidx *ix, size_t i, hashidx_hash_fn hash, const void *ctx)
{
	size_t j = i, k;
	uint64_t h = 0;

	for (;;) {
		j = (j + 1) & ix->mask;
		if (!ix->slot[j])
			break;
		hash(ctx, ix->slot[j] - 1, &h);
		k = h & ix->mask;
		/* Leave it if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		ix->slot[i] = ix->slot[j];
		i = j;
	}
	ix->slot[i] = 0;
}

void hashidx_clear(struct hashidx *ix)
{
	if (ix->slot)
		memset(ix->slot, 0, (ix->mask + 1) * sizeof(*ix->slot));
}

void hashidx_free(struct hashidx *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->mask = 0;
}
