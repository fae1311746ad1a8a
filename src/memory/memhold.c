/*
 * memhold — address ranges → the stack that created them (see memhold.h).
 *
 * Regions are disjoint [start, end) ranges kept in address order, in
 * chunks: a sorted array of chunks, each a sorted array of at most CHUNK
 * regions. A map inserts (after unmapping what it overlaps), an unmap
 * trims, splits or removes the regions it overlaps and subtracts the bytes
 * from their stacks. Two binary searches (over the chunks' last ends, then
 * within one chunk) find the first overlap; an insert moves at most a
 * chunk's regions (a full chunk splits in two), and an unmap over many
 * regions removes each covered run of a chunk with one move. So a mapping
 * costs O(log n + CHUNK) and an unmap O(log n + CHUNK + what it removes),
 * whatever the order: one plain sorted array cost a move of every region
 * above for each insert at the front (mmap hands out addresses downwards)
 * and each removal, and one munmap over 400,000 regions took 82 s.
 *
 * Stacks are interned by their frame ids in a chained hash; a freed slot
 * goes on a free list and is reused.
 */
#include "stacktop/memory/memhold.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/symbols/frames.h"

#define HASH_BUCKETS 4096
#define CHUNK 256 /* regions a chunk holds (8 KiB) */

struct region {
	uint64_t start, end;
	uint64_t t_ns;
	int stack;
	uint32_t weight; /* a sampled mapping stands for weight mappings */
};

struct chunk {
	size_t n; /* never 0 while in the chunk array */
	struct region r[CHUNK];
};

struct hstack {
	uint32_t *frames; /* NULL: free slot */
	int n;
	uint64_t hash;
	int next;	   /* hash chain, or free list */
	uint64_t held;	   /* bytes */
	uint64_t nregions; /* regions tagged with it */
	uint64_t fcount[MEMHOLD_FAULT_BUCKETS];
	uint64_t fepoch[MEMHOLD_FAULT_BUCKETS];
};

struct memhold {
	struct frames *fr;
	uint64_t window_ns, bucket_ns;
	struct chunk **c; /* in address order */
	size_t nc, ccap;
	size_t nr; /* regions in all chunks */
	struct hstack *s;
	int ns, scap, free_head;
	int heads[HASH_BUCKETS];
	uint64_t brk;
	bool brk_known;
	uint32_t weight; /* of new regions */
	struct memhold_stats st;
};

int memhold_new(struct frames *fr, uint64_t window_ns, struct memhold **out)
{
	struct memhold *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->fr = fr;
	h->window_ns = window_ns ? window_ns : 60000000000ull;
	h->bucket_ns = h->window_ns / MEMHOLD_FAULT_BUCKETS;
	if (!h->bucket_ns)
		h->bucket_ns = 1;
	h->free_head = -1;
	h->weight = 1;
	for (int i = 0; i < HASH_BUCKETS; i++)
		h->heads[i] = -1;
	*out = h;
	return 0;
}

static void stack_release(struct memhold *h, int i)
{
	struct hstack *s = &h->s[i];
	if (h->fr)
		for (int k = 0; k < s->n; k++)
			frames_unref(h->fr, s->frames[k]);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

void memhold_free(struct memhold *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->ns; i++)
		if (h->s[i].frames)
			stack_release(h, i);
	free(h->s);
	for (size_t i = 0; i < h->nc; i++)
		free(h->c[i]);
	free(h->c);
	free(h);
}

static uint64_t hash_frames(const uint32_t *f, int n)
{
	uint64_t x = 1469598103934665603ull;
	for (int i = 0; i < n; i++)
		x = (x ^ f[i]) * 1099511628211ull;
	return x;
}

int memhold_stack(struct memhold *h, const uint32_t *frames, int n)
{
	if (n < 0 || n > MEMHOLD_MAX_FRAMES)
		return -EINVAL;
	uint64_t x = hash_frames(frames, n);
	int b = (int)(x % HASH_BUCKETS);
	for (int i = h->heads[b]; i >= 0; i = h->s[i].next)
		if (h->s[i].hash == x && h->s[i].n == n &&
		    !memcmp(h->s[i].frames, frames, (size_t)n * sizeof(*frames)))
			return i;
	int i;
	if (h->free_head >= 0) {
		i = h->free_head;
		h->free_head = h->s[i].next;
	} else {
		if (h->ns == h->scap) {
			int cap = h->scap ? h->scap * 2 : 64;
			void *p = realloc(h->s, (size_t)cap * sizeof(*h->s));
			if (!p)
				return -ENOMEM;
			h->s = p;
			h->scap = cap;
		}
		i = h->ns++;
	}
	struct hstack *s = &h->s[i];
	memset(s, 0, sizeof(*s));
	/* One extra slot: a zero-frame stack still gets a non-NULL array. */
	if (!(s->frames = malloc(((size_t)n + 1) * sizeof(*frames)))) {
		s->next = h->free_head;
		h->free_head = i;
		return -ENOMEM;
	}
	memcpy(s->frames, frames, (size_t)n * sizeof(*frames));
	s->n = n;
	s->hash = x;
	s->next = h->heads[b];
	h->heads[b] = i;
	if (h->fr)
		for (int k = 0; k < n; k++)
			frames_ref(h->fr, frames[k]);
	h->st.stacks++;
	return i;
}

const uint32_t *memhold_frames(const struct memhold *h, int stack, int *n)
{
	if (stack < 0 || stack >= h->ns || !h->s[stack].frames)
		return NULL;
	*n = h->s[stack].n;
	return h->s[stack].frames;
}

/* Take slot i off its hash chain and put it on the free list. */
static void stack_drop(struct memhold *h, int i)
{
	int b = (int)(h->s[i].hash % HASH_BUCKETS);
	for (int *p = &h->heads[b]; *p >= 0; p = &h->s[*p].next)
		if (*p == i) {
			*p = h->s[i].next;
			break;
		}
	stack_release(h, i);
	h->s[i].next = h->free_head;
	h->free_head = i;
	h->st.stacks--;
}

/* Where the first region whose end is above addr is: chunk *ci, index
 * *ri (ci == nc: none). */
static void locate(const struct memhold *h, uint64_t addr, size_t *ci, size_t *ri)
{
	size_t lo = 0, hi = h->nc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct chunk *c = h->c[mid];

		if (c->r[c->n - 1].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ci = lo;
	*ri = 0;
	if (lo == h->nc)
		return;
	const struct chunk *c = h->c[lo];
	size_t a = 0, b = c->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (c->r[mid].end <= addr)
			a = mid + 1;
		else
			b = mid;
	}
	*ri = a;
}

static void credit(struct memhold *h, int stack, uint64_t bytes)
{
	if (stack < 0 || stack >= h->ns)
		return;
	struct hstack *s = &h->s[stack];
	s->held = s->held > bytes ? s->held - bytes : 0;
}

static void region_gone(struct memhold *h, const struct region *r)
{
	if (r->stack >= 0 && r->stack < h->ns && h->s[r->stack].nregions)
		h->s[r->stack].nregions--;
}

/* Put chunk c at index ci of the chunk array. 0 or -ENOMEM. */
static int chunk_insert(struct memhold *h, size_t ci, struct chunk *c)
{
	if (array_grow((void **)&h->c, &h->ccap, h->nc + 1, sizeof(*h->c)) < 0)
		return -ENOMEM;
	memmove(&h->c[ci + 1], &h->c[ci], (h->nc - ci) * sizeof(*h->c));
	h->c[ci] = c;
	h->nc++;
	return 0;
}

static void chunk_remove(struct memhold *h, size_t ci)
{
	free(h->c[ci]);
	memmove(&h->c[ci], &h->c[ci + 1], (h->nc - ci - 1) * sizeof(*h->c));
	h->nc--;
}

/* Insert r before position (ci, ri), ri up to the chunk's count; a full
 * chunk splits in two first. 0 or -ENOMEM (nothing inserted). */
static int region_insert(struct memhold *h, size_t ci, size_t ri, const struct region *r)
{
	struct chunk *c;

	if (!h->nc) {
		if (!(c = malloc(sizeof(*c))))
			return -ENOMEM;
		c->n = 0;
		if (chunk_insert(h, 0, c) < 0) {
			free(c);
			return -ENOMEM;
		}
		ci = ri = 0;
	} else if (ci == h->nc) {
		ci = h->nc - 1;
		ri = h->c[ci]->n;
	}
	c = h->c[ci];
	if (c->n == CHUNK) {
		struct chunk *d = malloc(sizeof(*d));

		if (!d || chunk_insert(h, ci + 1, d) < 0) {
			free(d);
			return -ENOMEM;
		}
		d->n = CHUNK / 2;
		memcpy(d->r, &c->r[CHUNK / 2], d->n * sizeof(*d->r));
		c->n = CHUNK / 2;
		h->st.moves += CHUNK / 2;
		if (ri > c->n) {
			ri -= c->n;
			c = d;
		}
	}
	memmove(&c->r[ri + 1], &c->r[ri], (c->n - ri) * sizeof(*c->r));
	h->st.moves += c->n - ri;
	c->r[ri] = *r;
	c->n++;
	h->nr++;
	return 0;
}

/* Drop the run of regions from (ci, ri) that [.., b) covers whole (the
 * first one is covered): their bytes go back, one move closes the gap,
 * an emptied chunk goes. Adds the bytes to *found. */
static void remove_covered(struct memhold *h, size_t ci, size_t ri, uint64_t b, uint64_t *found)
{
	struct chunk *c = h->c[ci];
	size_t j = ri;

	while (j < c->n && c->r[j].end <= b) {
		const struct region *r = &c->r[j++];

		credit(h, r->stack, (r->end - r->start) * r->weight);
		*found += r->end - r->start;
		region_gone(h, r);
	}
	memmove(&c->r[ri], &c->r[j], (c->n - j) * sizeof(*c->r));
	h->st.moves += c->n - j;
	h->nr -= j - ri;
	c->n -= j - ri;
	if (!c->n)
		chunk_remove(h, ci);
}

/* Remove [a, b) from the regions: trim, split or drop what overlaps. */
static void cut(struct memhold *h, uint64_t a, uint64_t b)
{
	uint64_t found = 0;
	size_t ci, ri;

	locate(h, a, &ci, &ri);
	while (ci < h->nc) {
		struct chunk *c = h->c[ci];

		if (ri >= c->n) {
			ci++;
			ri = 0;
			continue;
		}
		struct region *r = &c->r[ri];
		if (r->start >= b)
			break;
		if (r->start >= a && r->end <= b) {
			remove_covered(h, ci, ri, b, &found);
			continue; /* the same (ci, ri) is the next region, or past the chunk */
		}
		uint64_t lo = r->start > a ? r->start : a, hi = r->end < b ? r->end : b;
		credit(h, r->stack, (hi - lo) * r->weight);
		found += hi - lo;
		if (r->start < a && r->end > b) {
			/* A hole in the middle: split in two. */
			struct region upper = *r;

			upper.start = b;
			r->end = a;
			if (region_insert(h, ci, ri + 1, &upper) < 0) {
				/* Out of memory: forget the upper part. */
				credit(h, upper.stack, (upper.end - b) * upper.weight);
				break;
			}
			h->s[upper.stack].nregions++;
			break;
		}
		if (r->start < a) {
			r->end = a;
			ri++;
		} else {
			r->start = b; /* sorted and disjoint: nothing above overlaps */
			break;
		}
	}
	if (found < b - a)
		h->st.unknown_unmapped += (b - a) - found;
}

int memhold_map(struct memhold *h, uint64_t addr, uint64_t len, int stack, uint64_t t_ns)
{
	if (!len || addr + len < addr || stack < 0 || stack >= h->ns || !h->s[stack].frames)
		return -EINVAL;
	uint64_t unknown = h->st.unknown_unmapped;
	cut(h, addr, addr + len);
	h->st.unknown_unmapped = unknown; /* a fresh range overlapped nothing: not an unmap */
	h->st.maps++;
	if (h->nr >= MEMHOLD_REGIONS_MAX) {
		h->st.untracked_bytes += len;
		return 0;
	}
	struct region r = {addr, addr + len, t_ns, stack, h->weight};
	size_t ci, ri;

	locate(h, addr, &ci, &ri);
	if (region_insert(h, ci, ri, &r) < 0)
		return -ENOMEM;
	h->s[stack].held += len * h->weight;
	h->s[stack].nregions++;
	return 0;
}

void memhold_unmap(struct memhold *h, uint64_t addr, uint64_t len)
{
	if (!len || addr + len < addr)
		return;
	h->st.unmaps++;
	cut(h, addr, addr + len);
}

int memhold_remap(struct memhold *h, uint64_t old_addr, uint64_t old_len, uint64_t new_addr,
		  uint64_t new_len, int stack, uint64_t t_ns)
{
	h->st.remaps++;
	if (old_len && old_addr + old_len >= old_addr)
		cut(h, old_addr, old_addr + old_len);
	int e = memhold_map(h, new_addr, new_len, stack, t_ns);
	h->st.maps--; /* counted as a remap */
	return e;
}

void memhold_set_weight(struct memhold *h, uint32_t weight)
{
	h->weight = weight ? weight : 1;
}

void memhold_brk_start(struct memhold *h, uint64_t brk)
{
	h->brk = brk;
	h->brk_known = brk != 0;
}

int memhold_brk(struct memhold *h, uint64_t new_brk, int stack, uint64_t t_ns)
{
	h->st.brks++;
	if (!h->brk_known) {
		memhold_brk_start(h, new_brk);
		return 0;
	}
	uint64_t old = h->brk;
	h->brk = new_brk;
	if (new_brk > old) {
		uint32_t w = h->weight;
		h->weight = 1; /* brk is always traced */
		int e = memhold_map(h, old, new_brk - old, stack, t_ns);
		h->weight = w;
		h->st.maps--; /* counted as a brk */
		return e;
	}
	if (new_brk < old)
		cut(h, new_brk, old);
	return 0;
}

uint64_t memhold_reconcile(struct memhold *h, const uint64_t (*ranges)[2], size_t n,
			   uint64_t before_ns)
{
	/* Collect the gaps first: cutting moves the regions. */
	uint64_t(*gaps)[2] = NULL, taken = 0;
	size_t ng = 0, cap = 0, k = 0;
	for (size_t ci = 0; ci < h->nc; ci++)
		for (size_t ri = 0; ri < h->c[ci]->n; ri++) {
			const struct region *r = &h->c[ci]->r[ri];
			if (r->t_ns >= before_ns)
				continue;
			uint64_t at = r->start;
			while (at < r->end) {
				while (k < n && ranges[k][1] <= at)
					k++;
				uint64_t gap_end =
				    k < n && ranges[k][0] < r->end ? ranges[k][0] : r->end;
				if (gap_end > at) {
					if (array_grow((void **)&gaps, &cap, ng + 1, sizeof(*gaps)))
						goto out;
					gaps[ng][0] = at;
					gaps[ng++][1] = gap_end;
					at = gap_end;
				}
				if (k < n && ranges[k][0] <= at)
					at = ranges[k][1] < r->end ? ranges[k][1] : r->end;
			}
		}
out:
	for (size_t i = 0; i < ng; i++) {
		uint64_t unknown = h->st.unknown_unmapped;
		cut(h, gaps[i][0], gaps[i][1]);
		h->st.unknown_unmapped = unknown;
		taken += gaps[i][1] - gaps[i][0];
	}
	h->st.reconciled += taken;
	free(gaps);
	return taken;
}

void memhold_fault(struct memhold *h, int stack, uint64_t weight, uint64_t t_ns)
{
	if (stack < 0 || stack >= h->ns || !h->s[stack].frames)
		return;
	uint64_t epoch = t_ns / h->bucket_ns;
	int b = (int)(epoch % MEMHOLD_FAULT_BUCKETS);
	struct hstack *s = &h->s[stack];
	if (s->fepoch[b] != epoch) {
		s->fepoch[b] = epoch;
		s->fcount[b] = 0;
	}
	s->fcount[b] += weight;
}

static uint64_t faults_in_window(const struct memhold *h, const struct hstack *s, uint64_t now_ns)
{
	uint64_t epoch = now_ns / h->bucket_ns, sum = 0;
	for (int b = 0; b < MEMHOLD_FAULT_BUCKETS; b++)
		if (s->fcount[b] && s->fepoch[b] + MEMHOLD_FAULT_BUCKETS > epoch &&
		    s->fepoch[b] <= epoch)
			sum += s->fcount[b];
	return sum;
}

static int row_cmp(const void *a, const void *b)
{
	const struct memhold_row *x = a, *y = b;

	return ARRAY_CMP(y->held_window, x->held_window) ?: ARRAY_CMP(y->faults, x->faults)
		   ?: ARRAY_CMP(y->held, x->held) ?: x->stack - y->stack;
}

int memhold_rank(struct memhold *h, uint64_t now_ns, struct memhold_row **rows, int *n)
{
	*rows = NULL;
	*n = 0;
	uint64_t *win = calloc((size_t)h->ns + 1, sizeof(*win));
	if (!win)
		return -ENOMEM;
	uint64_t since = now_ns > h->window_ns ? now_ns - h->window_ns : 0;
	for (size_t ci = 0; ci < h->nc; ci++)
		for (size_t ri = 0; ri < h->c[ci]->n; ri++) {
			const struct region *r = &h->c[ci]->r[ri];

			if (r->t_ns >= since)
				win[r->stack] += (r->end - r->start) * r->weight;
		}
	struct memhold_row *out = calloc((size_t)h->ns + 1, sizeof(*out));
	if (!out) {
		free(win);
		return -ENOMEM;
	}
	int k = 0;
	for (int i = 0; i < h->ns; i++) {
		struct hstack *s = &h->s[i];
		if (!s->frames)
			continue;
		uint64_t f = faults_in_window(h, s, now_ns);
		if (!s->nregions && !f) {
			stack_drop(h, i);
			continue;
		}
		out[k++] = (struct memhold_row){i, s->held, win[i], f};
	}
	free(win);
	qsort(out, (size_t)k, sizeof(*out), row_cmp);
	*rows = out;
	*n = k;
	return 0;
}

void memhold_stats(const struct memhold *h, struct memhold_stats *out)
{
	*out = h->st;
	out->regions = h->nr;
}
