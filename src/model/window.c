/*
 * window — the rolling-window aggregator.
 *
 * Owns two kinds of tables, all compact arrays with a hash index over them
 * (hashidx), so ids stay dense and queries walk plain arrays:
 *
 *  - trie nodes: (parent, frame) → node id; node 0 is the root.
 *  - count maps (struct cmap): (node, tid) → count, one per time bucket, one
 *    for the running sum over live buckets and one (node 0) for per-thread
 *    totals. The running sum removes entries that fall to zero (swap with
 *    the last entry plus backward-shift deletion in the index), so
 *    window_counts() hands out its entry array as is.
 *
 * Time: bucket number b = time_ns / bucket_ns lives in ring slot
 * b % nbuckets; bucket b is live while b > newest - nbuckets. Expiry looks
 * at each ring slot once per bucket step, so a gap of an hour costs the
 * same as a gap of one bucket: O(nbuckets + expired entries).
 *
 * Node lifetime: a node is live while the running sum has a (node, tid)
 * entry with it as the leaf, or it has a live child. Each node counts both
 * (struct tnode.live); when the count falls to zero (its last sum entry
 * left with an expired bucket, or its last child was freed) the node leaves
 * the index, its id goes on a free list for the next new node, it drops its
 * frame reference and its parent's count, which may free the parent in
 * turn. So freeing costs O(nodes freed), and the trie, and through it the
 * frames table, hold what the window counts, not everything ever seen.
 * window_reset frees every node but the root. Ids of freed nodes are
 * reused: nobody may keep a node id (or a frame id) across a call that may
 * expire buckets (window_add, window_advance, window_reset).
 *
 * Frames are the frames table's (borrowed): a trie node holds a reference
 * on its frame (frames_ref when the node is made, frames_unref when it is
 * freed), and the window reads frames for its top-N keys and wait kinds.
 *
 * Wall mode: an off-CPU sample ends in a pseudo frame naming its wait kind
 * (frames_wait). Everything about waits is derived from the leaf frame of each
 * counted stack, so the trie, the buckets and expiry need nothing new.
 *
 * Contract: window_new → (add, advance, top)* → window_free, all inside the
 * frames table's life. Pointers from window_node/window_counts are valid
 * until the next call that may add or change counts.
 */
#include "stacktop/model/window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/array.h"
#include "stacktop/proc/funckind.h"
#include "stacktop/proc/waits.h"

#define NO_FRAME UINT32_MAX /* the root's frame, and a free node's */
#define NO_NODE UINT32_MAX  /* end of the free list */

/* (node, tid) → count. Entries are struct window_count so the running sum
 * can be handed out directly. */
struct cmap {
	struct window_count *e;
	size_t n, cap;
	struct hashidx ix;
};

struct bucket {
	uint64_t num;
	bool live;
	struct cmap m;
};

/* A trie node as stored: the public part, plus its count of sum entries
 * that end at it and live children. A free node has frame NO_FRAME and
 * links the free list through parent. */
struct tnode {
	struct window_node n;
	uint32_t live : 31; /* sum entries and children: fewer than nodes x threads */
	uint32_t gc : 1;    /* its frame or one above it is a collector's (funckind GC) */
};

struct window {
	unsigned seconds;
	uint64_t bucket_ns;
	size_t nbuckets;
	struct bucket *buckets;
	bool have_time;
	uint64_t newest; /* highest bucket number seen */

	struct frames *fr; /* borrowed */

	struct tnode *nodes;
	size_t nnodes, capnodes; /* nnodes: one past the highest id handed out */
	size_t nlive;		 /* live nodes, the root not counted */
	uint32_t free_head;	 /* freed node ids, NO_NODE at the end */
	struct hashidx nix;	 /* (parent, frame) → node, the root not indexed */

	struct cmap sum;  /* running sum over live buckets */
	struct cmap tids; /* (0, tid) → samples */
	uint64_t total;
	/* per frame id: 0 not asked, 1 not GC, 2 GC (funckind), so a new
	 * node costs no name matching; cleared when a node holding the frame
	 * is freed (an id is reused only once no node holds it) */
	uint8_t *frame_gc;
	size_t nframe_gc;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	if (!s)
		return hashidx_mix64(h ^ 0x5bd1e995u);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return hashidx_mix64(h ^ 0xff);
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return a == b || strcmp(a, b) == 0;
}

/* ---- count maps ---- */

static uint64_t cmap_hash(uint32_t node, int tid)
{
	return hashidx_mix64(((uint64_t)node << 32) | (uint32_t)tid);
}

static bool cmap_hash_of(const void *ctx, uint32_t i, uint64_t *h)
{
	const struct window_count *c = &((const struct cmap *)ctx)->e[i];

	*h = cmap_hash(c->node, c->tid);
	return true;
}

static bool cmap_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct window_count *c = &((const struct cmap *)ctx)->e[i], *k = key;

	return c->node == k->node && c->tid == k->tid;
}

static long cmap_find(const struct cmap *m, uint32_t node, int tid, size_t *slotp)
{
	struct window_count k = {.node = node, .tid = tid};

	return (long)hashidx_find(&m->ix, cmap_hash(node, tid), cmap_eq, m, &k, slotp);
}

static int cmap_add(struct cmap *m, uint32_t node, int tid, uint64_t delta)
{
	long i = cmap_find(m, node, tid, NULL);
	int err;

	if (i >= 0) {
		m->e[i].count += delta;
		return 0;
	}
	if ((err = hashidx_reserve(&m->ix, m->n, m->n, 16, cmap_hash_of, m)) ||
	    (err = array_grow((void **)&m->e, &m->cap, m->n + 1, sizeof(*m->e))))
		return err;
	m->e[m->n] = (struct window_count){.node = node, .tid = tid, .count = delta};
	hashidx_put(&m->ix, cmap_hash(node, tid), (uint32_t)m->n++);
	return 0;
}

/* Subtract delta; an entry reaching zero leaves the compact array (the
 * last entry moves into its place). */
static void cmap_sub(struct cmap *m, uint32_t node, int tid, uint64_t delta)
{
	const struct window_count *last;
	size_t s;
	long i = cmap_find(m, node, tid, &s);

	if (i < 0)
		return;
	if (m->e[i].count > delta) {
		m->e[i].count -= delta;
		return;
	}
	hashidx_unslot(&m->ix, s, cmap_hash_of, m);
	last = &m->e[m->n - 1];
	if ((size_t)i != m->n - 1) {
		s = hashidx_slot_of(&m->ix, cmap_hash(last->node, last->tid), (uint32_t)m->n - 1);
		hashidx_set(&m->ix, s, (uint32_t)i);
		m->e[i] = *last;
	}
	m->n--;
}

static uint64_t cmap_get(const struct cmap *m, uint32_t node, int tid)
{
	long i = cmap_find(m, node, tid, NULL);

	return i < 0 ? 0 : m->e[i].count;
}

static void cmap_clear(struct cmap *m)
{
	if (m->n)
		hashidx_clear(&m->ix);
	m->n = 0;
}

static void cmap_free(struct cmap *m)
{
	free(m->e);
	hashidx_free(&m->ix);
	memset(m, 0, sizeof(*m));
}

/* ---- lifecycle ---- */

int window_new(unsigned seconds, uint64_t bucket_ns, struct frames *fr, struct window **out)
{
	struct window *w;
	uint64_t span;

	if (seconds == 0 || !fr)
		return -EINVAL;
	if (bucket_ns == 0)
		bucket_ns = 1000000000ull;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->seconds = seconds;
	w->fr = fr;
	w->bucket_ns = bucket_ns;
	span = (uint64_t)seconds * 1000000000ull;
	w->nbuckets = (size_t)((span + bucket_ns - 1) / bucket_ns);
	if (w->nbuckets == 0)
		w->nbuckets = 1;
	if (w->nbuckets > 1000000)
		goto err;
	w->buckets = calloc(w->nbuckets, sizeof(*w->buckets));
	if (!w->buckets)
		goto err;
	/* The root: its own parent, no frame. */
	if (array_grow((void **)&w->nodes, &w->capnodes, 1, sizeof(*w->nodes)))
		goto err;
	w->nodes[0] = (struct tnode){.n = {.parent = WINDOW_ROOT, .frame = NO_FRAME, .depth = 0}};
	w->nnodes = 1;
	w->free_head = NO_NODE;
	*out = w;
	return 0;
err:
	free(w->buckets);
	free(w);
	return -ENOMEM;
}

void window_free(struct window *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nbuckets; i++)
		cmap_free(&w->buckets[i].m);
	free(w->buckets);
	for (i = 1; i < w->nnodes; i++)
		if (w->nodes[i].n.frame != NO_FRAME)
			frames_unref(w->fr, w->nodes[i].n.frame);
	free(w->nodes);
	free(w->frame_gc);
	hashidx_free(&w->nix);
	cmap_free(&w->sum);
	cmap_free(&w->tids);
	free(w);
}

/* ---- frames ---- */

const struct frames *window_frames(const struct window *w)
{
	return w->fr;
}

struct frames *window_frames_mut(struct window *w)
{
	return w->fr;
}

/* The frame of a node the window made: it holds a reference, so it is live. */
static const struct frame *node_frame(const struct window *w, uint32_t node)
{
	return frames_get(w->fr, w->nodes[node].n.frame);
}

/* ---- trie ---- */

static uint64_t node_hash(uint32_t parent, uint32_t frame)
{
	return hashidx_mix64(((uint64_t)parent << 32) ^ frame ^ 0x9e3779b97f4a7c15ull);
}

static bool node_hash_of(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct window_node *n = &((const struct window *)ctx)->nodes[id].n;

	*h = node_hash(n->parent, n->frame);
	return n->frame != NO_FRAME; /* the root and free nodes are not indexed */
}

static bool node_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct window_node *n = &((const struct window *)ctx)->nodes[id].n, *k = key;

	return n->parent == k->parent && n->frame == k->frame;
}

/* Is frame a garbage collector's function? Asked once per trie node (a
 * frame is named when it is made), so a refresh's GC share costs no name
 * matching. */
static bool frame_gc(struct window *w, uint32_t frame)
{
	const struct frame *f;
	bool gc;

	if (frame < w->nframe_gc && w->frame_gc[frame])
		return w->frame_gc[frame] == 2;
	f = frames_get(w->fr, frame);
	gc = f && f->has_sym && f->sym.func &&
	     funckind_of(f->sym.func, f->sym.kernel) == FUNCKIND_GC;
	if (frame >= w->nframe_gc) {
		size_t n = w->nframe_gc ? w->nframe_gc : 1024;
		uint8_t *a;

		while (n <= frame)
			n *= 2;
		if (!(a = realloc(w->frame_gc, n)))
			return gc; /* asked again next time */
		memset(a + w->nframe_gc, 0, n - w->nframe_gc);
		w->frame_gc = a;
		w->nframe_gc = n;
	}
	w->frame_gc[frame] = gc ? 2 : 1;
	return gc;
}

/* A node holding frame is freed: its id may be another frame next time. */
static void frame_gc_forget(struct window *w, uint32_t frame)
{
	if (frame < w->nframe_gc)
		w->frame_gc[frame] = 0;
}

/* The child of parent for frame, created on first sight (with nothing
 * holding it yet: the caller pins it or gives it a child). */
static int64_t node_child(struct window *w, uint32_t parent, uint32_t frame)
{
	struct window_node k = {.parent = parent, .frame = frame};
	uint64_t h = node_hash(parent, frame);
	int64_t id = hashidx_find(&w->nix, h, node_eq, w, &k, NULL);

	if (id >= 0)
		return id;
	if (hashidx_reserve(&w->nix, w->nlive, w->nnodes, 64, node_hash_of, w))
		return -ENOMEM;
	if (w->free_head != NO_NODE) {
		id = w->free_head;
		w->free_head = w->nodes[id].n.parent;
	} else {
		if (w->nnodes >= UINT32_MAX - 1 ||
		    array_grow((void **)&w->nodes, &w->capnodes, w->nnodes + 1, sizeof(*w->nodes)))
			return -ENOMEM;
		id = (int64_t)w->nnodes++;
	}
	w->nodes[id] = (struct tnode){
	    .n = {.parent = parent, .frame = frame, .depth = w->nodes[parent].n.depth + 1},
	    .gc = w->nodes[parent].gc || frame_gc(w, frame) ? 1u : 0u};
	hashidx_put(&w->nix, h, (uint32_t)id);
	w->nodes[parent].live++;
	w->nlive++;
	frames_ref(w->fr, frame);
	return id;
}

/* Free node id, then each ancestor nothing holds any more; stops at a node
 * still held (live > 0) and at the root. */
static void node_free_chain(struct window *w, uint32_t id)
{
	while (id != WINDOW_ROOT && w->nodes[id].live == 0) {
		struct window_node *n = &w->nodes[id].n;
		uint32_t parent = n->parent;
		size_t j = hashidx_slot_of(&w->nix, node_hash(parent, n->frame), id);

		if (j != SIZE_MAX)
			hashidx_unslot(&w->nix, j, node_hash_of, w);
		frame_gc_forget(w, n->frame);
		frames_unref(w->fr, n->frame);
		*n = (struct window_node){.parent = w->free_head, .frame = NO_FRAME};
		w->free_head = id;
		w->nlive--;
		w->nodes[parent].live--;
		id = parent;
	}
}

/* Drop one hold on node id (a sum entry, a child or a pin). */
static void node_put(struct window *w, uint32_t id)
{
	w->nodes[id].live--;
	node_free_chain(w, id);
}

const struct window_node *window_node(const struct window *w, uint32_t id)
{
	if (id >= w->nnodes || (id != WINDOW_ROOT && w->nodes[id].n.frame == NO_FRAME))
		return NULL;
	return &w->nodes[id].n;
}

size_t window_nnodes(const struct window *w)
{
	return w->nnodes;
}

size_t window_live_nodes(const struct window *w)
{
	return w->nlive;
}

/* ---- the running sum: each of its entries holds its leaf node ---- */

static int sum_add(struct window *w, uint32_t node, int tid, uint64_t delta)
{
	size_t had = w->sum.n;
	int err = cmap_add(&w->sum, node, tid, delta);

	if (!err && w->sum.n > had)
		w->nodes[node].live++;
	return err;
}

static void sum_sub(struct window *w, uint32_t node, int tid, uint64_t delta)
{
	size_t had = w->sum.n;

	cmap_sub(&w->sum, node, tid, delta);
	if (w->sum.n < had)
		node_put(w, node);
}

/* ---- lines ---- */

int window_resolve_lines(struct window *w, int tid)
{
	uint8_t *seen = calloc(w->nnodes + 1, 1);
	size_t i;

	if (!seen)
		return -ENOMEM;
	/* Walk each live stack up to the first node already done: each
	 * node's frame is asked once (frames_line caches across calls). */
	for (i = 0; i < w->sum.n; i++) {
		const struct window_count *c = &w->sum.e[i];
		uint32_t n;

		if (!c->count || (tid && c->tid != tid))
			continue;
		for (n = c->node; n != WINDOW_ROOT && !seen[n]; n = w->nodes[n].n.parent) {
			seen[n] = 1;
			frames_line(w->fr, w->nodes[n].n.frame);
		}
	}
	free(seen);
	return 0;
}

/* ---- time ---- */

static void bucket_expire(struct window *w, struct bucket *b)
{
	size_t i;

	for (i = 0; i < b->m.n; i++) {
		const struct window_count *c = &b->m.e[i];

		sum_sub(w, c->node, c->tid, c->count);
		cmap_sub(&w->tids, 0, c->tid, c->count);
		w->total -= c->count;
	}
	cmap_clear(&b->m);
	b->live = false;
}

void window_advance(struct window *w, uint64_t now_ns)
{
	uint64_t b = now_ns / w->bucket_ns;
	size_t i;

	if (w->have_time && b <= w->newest)
		return;
	w->newest = b;
	w->have_time = true;
	for (i = 0; i < w->nbuckets; i++) {
		struct bucket *bk = &w->buckets[i];

		if (bk->live && bk->num + w->nbuckets <= b)
			bucket_expire(w, bk);
	}
}

int window_add(struct window *w, uint64_t time_ns, int tid, const uint32_t *frames, size_t n,
	       uint32_t weight)
{
	uint64_t b = time_ns / w->bucket_ns;
	struct bucket *bk;
	uint32_t node = WINDOW_ROOT;
	int64_t child;
	size_t i;
	int err;

	if (n == 0 || !frames)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!frames_get(w->fr, frames[i]))
			return -EINVAL;
	if (weight == 0)
		return 0;
	if (w->have_time && b + w->nbuckets <= w->newest)
		return 0; /* older than the window: nothing to count it in */
	/* The path first, pinned at its leaf, and only then expire: the
	 * caller's frames may be held by nothing but nodes of the buckets
	 * about to expire, and must not be reclaimed under it. */
	for (i = 0; i < n; i++) {
		child = node_child(w, node, frames[i]);
		if (child < 0) {
			node_free_chain(w, node);
			return (int)child;
		}
		node = (uint32_t)child;
	}
	w->nodes[node].live++;
	window_advance(w, time_ns);
	bk = &w->buckets[b % w->nbuckets];
	if (bk->live && bk->num != b)
		bucket_expire(w, bk); /* cannot happen with b in the window; stay safe */
	if (!bk->live) {
		bk->live = true;
		bk->num = b;
	}
	/* Make every entry first, so a failure can take back the ones it made
	 * (a zero count is only ever a new entry) and the sum stays the sum of
	 * the buckets. */
	if ((err = sum_add(w, node, tid, 0)))
		goto out;
	if ((err = cmap_add(&bk->m, node, tid, 0)) || (err = cmap_add(&w->tids, 0, tid, 0))) {
		cmap_sub(&bk->m, node, tid, 0);
		sum_sub(w, node, tid, 0);
		goto out;
	}
	cmap_add(&bk->m, node, tid, weight);
	sum_add(w, node, tid, weight);
	cmap_add(&w->tids, 0, tid, weight);
	w->total += weight;
out:
	node_put(w, node); /* the pin */
	return err;
}

void window_reset(struct window *w)
{
	size_t i;

	for (i = 0; i < w->nbuckets; i++) {
		cmap_free(&w->buckets[i].m);
		w->buckets[i].live = false;
	}
	cmap_free(&w->sum);
	cmap_free(&w->tids);
	w->total = 0;
	/* Every node but the root goes, and the index's memory with it: a
	 * reset is rare, and the next samples grow what they need. */
	for (i = 1; i < w->nnodes; i++)
		if (w->nodes[i].n.frame != NO_FRAME)
			frames_unref(w->fr, w->nodes[i].n.frame);
	if (w->frame_gc)
		memset(w->frame_gc, 0, w->nframe_gc);
	hashidx_free(&w->nix);
	w->nodes[0].live = 0;
	w->nnodes = 1;
	w->nlive = 0;
	w->free_head = NO_NODE;
}

const struct window_count *window_counts(const struct window *w, size_t *n)
{
	*n = w->sum.n;
	return w->sum.e;
}

size_t window_nbuckets(const struct window *w)
{
	return w->nbuckets;
}

uint64_t window_bucket_ns(const struct window *w)
{
	return w->bucket_ns;
}

const struct window_count *window_bucket_counts(const struct window *w, size_t slot, uint64_t *num,
						size_t *n)
{
	const struct bucket *b = slot < w->nbuckets ? &w->buckets[slot] : NULL;

	if (!b || !b->live || !b->m.n) {
		*n = 0;
		return NULL;
	}
	*num = b->num;
	*n = b->m.n;
	return b->m.e;
}

uint64_t window_total(const struct window *w)
{
	return w->total;
}

uint64_t window_thread_total(const struct window *w, int tid)
{
	return cmap_get(&w->tids, 0, tid);
}

unsigned window_seconds(const struct window *w)
{
	return w->seconds;
}

double window_span_s(const struct window *w, uint64_t now_ns)
{
	uint64_t nowb = now_ns / w->bucket_ns, oldest = UINT64_MAX, start;
	double span;
	size_t i;

	if (w->have_time && w->newest > nowb)
		nowb = w->newest;
	for (i = 0; i < w->nbuckets; i++) {
		const struct bucket *bk = &w->buckets[i];

		if (bk->live && bk->m.n && bk->num + w->nbuckets > nowb && bk->num < oldest)
			oldest = bk->num;
	}
	if (oldest == UINT64_MAX)
		return 0;
	start = oldest * w->bucket_ns;
	if (now_ns <= start)
		return 0;
	span = (double)(now_ns - start) / 1e9;
	return span > w->seconds ? w->seconds : span;
}

/* ---- wait kinds (wall mode) ---- */

static uint8_t leaf_wait(const struct window *w, uint32_t node)
{
	uint8_t k = node_frame(w, node)->wait;

	return k < SAMPLE_WAIT_COUNT ? k : 0;
}

/* Idle: at least 95% of a thread's wall time waits for work (a condition
 * variable, a join, an event loop). Not all of it: a pool worker that takes
 * a job now and then, or that a ptrace stop of ours caught on its way back
 * to its wait, is still a thread waiting for work (one such sample kept a
 * worker on screen for the window's whole minute). A sleep or a read of a
 * pipe may be what the program waits for, so it is not idle. */
#define IDLE_SHARE_MIN 0.95

static bool mostly_idle(uint64_t idle, uint64_t all)
{
	return all && (double)idle >= IDLE_SHARE_MIN * (double)all;
}

/* Per thread: (0, tid) → samples waiting for work, (1, tid) → all samples,
 * in the window. */
static int thread_idle_counts(const struct window *w, struct cmap *counts)
{
	size_t i;

	for (i = 0; i < w->sum.n; i++) {
		const struct window_count *c = &w->sum.e[i];
		int err;

		if (!c->count)
			continue;
		if (leaf_wait(w, c->node) == SAMPLE_WAIT_IDLE &&
		    (err = cmap_add(counts, 0, c->tid, c->count)))
			return err;
		if ((err = cmap_add(counts, 1, c->tid, c->count)))
			return err;
	}
	return 0;
}

/* ---- top-N ---- */

/* What a frame aggregates under: see struct window_top_query. */
static uint64_t key_hash(const struct frame *f, enum window_key key)
{
	uint64_t h = 0xcbf29ce484222325ull ^ f->kernel ^ (uint64_t)f->sym.inlined << 1;

	if (!f->has_sym)
		return hashidx_mix64(h ^ 1 ^
				     hashidx_mix64(f->pc ^ ((uint64_t)(uint32_t)f->pid << 40)));
	h = hash_str(h, f->sym.module);
	if (f->sym.func)
		h = hash_str(h ^ 2, f->sym.func);
	else
		h = hashidx_mix64(h ^ 3 ^ f->sym.offset);
	if (key == WINDOW_KEY_LINE)
		h = hashidx_mix64(hash_str(h, f->sym.file) ^ (uint64_t)(uint32_t)f->sym.line);
	return h;
}

static bool key_eq(const struct frame *a, const struct frame *b, enum window_key key)
{
	if (a->kernel != b->kernel || a->has_sym != b->has_sym || a->sym.inlined != b->sym.inlined)
		return false;
	if (!a->has_sym)
		return a->pid == b->pid && a->pc == b->pc;
	if (!str_eq(a->sym.module, b->sym.module) || !a->sym.func != !b->sym.func)
		return false;
	if (a->sym.func ? !str_eq(a->sym.func, b->sym.func) : a->sym.offset != b->sym.offset)
		return false;
	if (key == WINDOW_KEY_LINE)
		return a->sym.line == b->sym.line && str_eq(a->sym.file, b->sym.file);
	return true;
}

/* Per row, beside the rows handed out: its key's hash and the stamp of
 * the last stack that credited its total. */
struct toprow_aux {
	uint64_t hash;
	uint32_t stamp;
};

struct topacc {
	struct window *w;
	enum window_key key;
	struct window_top_row *rows;
	struct toprow_aux *aux;
	size_t n, cap, auxcap;
	struct hashidx ix; /* key → row */
	int32_t *frow;	   /* frame id → row, -1 not yet known */
	/* by_process: the process of the stack being walked, and the
	 * process each frow entry was found for (rows are per process). */
	int pid;
	int *fpid;
};

static bool top_hash_of(const void *ctx, uint32_t r, uint64_t *h)
{
	*h = ((const struct topacc *)ctx)->aux[r].hash;
	return true;
}

struct top_key {
	uint64_t hash;
	const struct frame *f;
};

static bool top_eq(const void *ctx, uint32_t r, const void *key)
{
	const struct topacc *a = ctx;
	const struct top_key *k = key;

	return a->aux[r].hash == k->hash && a->rows[r].pid == a->pid &&
	       key_eq(frames_get(a->w->fr, a->rows[r].frame), k->f, a->key);
}

/* The row of frame id, found by key or created. Returns -ENOMEM or >= 0. */
static long top_row_of(struct topacc *a, uint32_t id)
{
	struct top_key k;
	int64_t r;
	size_t j;

	if (a->frow[id] >= 0 && (!a->fpid || a->fpid[id] == a->pid))
		return a->frow[id];
	k.f = frames_get(a->w->fr, id);
	k.hash = key_hash(k.f, a->key) ^ hashidx_mix64((uint64_t)(uint32_t)a->pid);
	if (hashidx_reserve(&a->ix, a->n, a->n, 256, top_hash_of, a))
		return -ENOMEM;
	if (a->fpid)
		a->fpid[id] = a->pid;
	if ((r = hashidx_find(&a->ix, k.hash, top_eq, a, &k, &j)) >= 0) {
		a->frow[id] = (int32_t)r;
		return (long)r;
	}
	if (array_grow((void **)&a->rows, &a->cap, a->n + 1, sizeof(*a->rows)) ||
	    array_grow((void **)&a->aux, &a->auxcap, a->n + 1, sizeof(*a->aux)))
		return -ENOMEM;
	a->rows[a->n] = (struct window_top_row){.frame = id, .pid = a->pid};
	a->aux[a->n] = (struct toprow_aux){.hash = k.hash};
	hashidx_set(&a->ix, j, (uint32_t)a->n);
	a->frow[id] = (int32_t)a->n;
	return (long)a->n++;
}

/* Credit one stack (leaf node) with c samples: self to the first kept
 * frame, total once per distinct key (the stamp marks keys seen). */
static int top_walk(struct topacc *a, uint32_t leaf, uint64_t c, uint32_t stamp,
		    const struct window_top_query *q)
{
	const struct window *w = a->w;
	bool self_done = false;
	uint8_t kind = node_frame(w, leaf)->wait;
	uint32_t n;
	long r;

	for (n = leaf; n != WINDOW_ROOT; n = w->nodes[n].n.parent) {
		uint32_t f = w->nodes[n].n.frame;
		const struct frame *fp = frames_get(w->fr, f);

		if (q->hide_kernel && fp->kernel)
			continue;
		if ((!q->include_wait_rows && fp->wait) || frame_is_process(fp))
			continue;
		r = top_row_of(a, f);
		if (r < 0)
			return (int)r;
		if (!self_done) {
			a->rows[r].self += c;
			self_done = true;
		}
		if (a->aux[r].stamp != stamp) {
			a->aux[r].stamp = stamp;
			a->rows[r].total += c;
			a->rows[r].wait[kind < SAMPLE_WAIT_COUNT ? kind : 0] += c;
		}
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The process whose root frame a stack (leaf node) starts with, 0 when
 * none (whole-machine mode only). */
static int node_process(const struct window *w, uint32_t leaf)
{
	uint32_t n = leaf;

	while (n != WINDOW_ROOT && w->nodes[n].n.depth > 1)
		n = w->nodes[n].n.parent;
	if (n == WINDOW_ROOT)
		return 0;
	const struct frame *f = node_frame(w, n);
	return frame_is_process(f) ? f->pid : 0;
}

/* The process of each leaf (q->pid, by_process), memoized: pidof[node]
 * is pid + 1, 0 not known yet. */
static int leaf_process(const struct window *w, int *pidof, uint32_t leaf)
{
	if (!pidof[leaf])
		pidof[leaf] = node_process(w, leaf) + 1;
	return pidof[leaf] - 1;
}

int window_top(struct window *w, const struct window_top_query *q, struct window_top_row **rows,
	       size_t *n, uint64_t *total)
{
	int *pidof = NULL;
	struct topacc a = {.w = w, .key = q->key};
	struct cmap idle = {0};
	uint64_t *ncount = NULL, sum = 0;
	uint32_t *leaves = NULL, stamp = 0;
	size_t i, nleaves = 0;
	int err = -ENOMEM;

	*rows = NULL;
	*n = 0;
	if (total)
		*total = 0;
	/* Sum the counts per leaf over threads first: one walk per stack. */
	ncount = calloc(w->nnodes, sizeof(*ncount));
	/* a leaf is listed once, whatever the buckets: nnodes bounds them */
	leaves = malloc((w->nnodes + 1) * sizeof(*leaves));
	a.frow = malloc((frames_span(w->fr) + 1) * sizeof(*a.frow));
	if (!ncount || !leaves || !a.frow)
		goto out;
	if ((q->pid || q->by_process) && !(pidof = calloc(w->nnodes, sizeof(*pidof))))
		goto out;
	if (q->by_process && !(a.fpid = calloc(frames_span(w->fr) + 1, sizeof(*a.fpid))))
		goto out;
	memset(a.frow, 0xff, (frames_span(w->fr) + 1) * sizeof(*a.frow));
	if (q->hide_idle && (err = thread_idle_counts(w, &idle)))
		goto out;
	err = -ENOMEM;
	/* The running sum, or the buckets of the seconds asked for. */
	for (size_t b = 0; b < (q->nseconds ? w->nbuckets : 1); b++) {
		const struct cmap *m = q->nseconds ? &w->buckets[b].m : &w->sum;
		if (q->nseconds &&
		    (!w->buckets[b].live || !bsearch(&w->buckets[b].num, q->seconds, q->nseconds,
						     sizeof(*q->seconds), u64_cmp)))
			continue;
		for (i = 0; i < m->n; i++) {
			const struct window_count *c = &m->e[i];

			if (q->tid && c->tid != q->tid)
				continue;
			if (q->pid && leaf_process(w, pidof, c->node) != q->pid)
				continue;
			if (q->hide_idle &&
			    mostly_idle(cmap_get(&idle, 0, c->tid), cmap_get(&idle, 1, c->tid)))
				continue;
			if (!ncount[c->node] && c->count)
				leaves[nleaves++] = c->node;
			ncount[c->node] += c->count;
			sum += c->count;
		}
	}
	for (i = 0; i < nleaves; i++) {
		if (q->by_process)
			a.pid = leaf_process(w, pidof, leaves[i]);
		err = top_walk(&a, leaves[i], ncount[leaves[i]], ++stamp, q);
		if (err)
			goto out;
	}
	err = 0;
	*rows = a.rows;
	*n = a.n;
	a.rows = NULL;
	if (!*rows) {
		*rows = malloc(sizeof(**rows)); /* callers may free unconditionally */
		if (!*rows)
			err = -ENOMEM;
	}
	if (total)
		*total = sum;
out:
	free(a.rows);
	free(a.aux);
	hashidx_free(&a.ix);
	free(a.frow);
	free(a.fpid);
	free(pidof);
	free(leaves);
	free(ncount);
	cmap_free(&idle);
	return err;
}

/* ---- wall mode ---- */

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

uint64_t window_gc_counts(const struct window *w, const int *gc_tids, size_t ntids,
			  uint64_t *running)
{
	uint64_t gc = 0;

	*running = 0;
	for (size_t i = 0; i < w->sum.n; i++) {
		const struct window_count *c = &w->sum.e[i];

		if (leaf_wait(w, c->node) != SAMPLE_WAIT_NONE)
			continue; /* wall mode: off the CPU */
		*running += c->count;
		if (w->nodes[c->node].gc ||
		    (ntids && bsearch(&c->tid, gc_tids, ntids, sizeof(*gc_tids), int_cmp)))
			gc += c->count;
	}
	return gc;
}

bool window_thread_idle(const struct window *w, int tid)
{
	uint64_t counts[SAMPLE_WAIT_COUNT], all = window_wait_counts(w, tid, counts);

	return mostly_idle(counts[SAMPLE_WAIT_IDLE], all);
}

uint64_t window_wait_counts(const struct window *w, int tid, uint64_t counts[SAMPLE_WAIT_COUNT])
{
	uint64_t sum = 0;
	size_t i;

	memset(counts, 0, SAMPLE_WAIT_COUNT * sizeof(*counts));
	for (i = 0; i < w->sum.n; i++) {
		const struct window_count *c = &w->sum.e[i];

		if (tid && c->tid != tid)
			continue;
		counts[leaf_wait(w, c->node)] += c->count;
		sum += c->count;
	}
	return sum;
}
