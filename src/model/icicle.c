/*
 * icicle — merged call tree (by function) and its column layout.
 *
 * Contract: see include/stacktop/icicle.h. The tree owns copies of every
 * string it shows (interned once in a small pool), so it stays valid after
 * the window moves on; icicle_free releases all of it.
 *
 * Building walks each live (leaf node, tid) count of the window up its trie
 * once: O(entries x depth). Merging children by function needs a lookup
 * (parent, name, module, kernel) → node (a hashidx); names and modules are
 * interned in a strpool, so the lookup compares pointers. Sibling lists are sorted once at the
 * end (heaviest first, then by name).
 *
 * Layout is breadth first: the boxes array doubles as the queue, which
 * yields the boxes row by row and left to right for free.
 */
#include "stacktop/model/icicle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/model/window.h"

struct icicle_priv {
	struct strpool pool;  /* every string the tree shows */
	struct hashidx child; /* (parent, name, module, kernel) → node */
	uint64_t *rep;	      /* per node: samples of the stack its frame came from */
	size_t cap, repcap;   /* of t->nodes, of rep */
	/* Names of the per-thread roots (icicle_query.thread_label). */
	void (*thread_label)(const void *ctx, int tid, char *buf, size_t size);
	const void *label_ctx;
};

/* The pool's copy of s (NULL stays NULL), or NULL with *err set. */
static const char *intern(struct icicle_priv *p, const char *s, int *err)
{
	const char *c;

	if (!s)
		return NULL;
	if (!(c = strpool_cstr(&p->pool, s)))
		*err = -ENOMEM;
	return c;
}

static uint64_t child_hash(uint32_t parent, const char *name, const char *module, bool kernel)
{
	return hashidx_mix64(((uint64_t)parent << 1 | kernel) ^ hashidx_mix64((uintptr_t)name) ^
			     hashidx_mix64((uintptr_t)module * 31));
}

static bool child_hash_of(const void *ctx, uint32_t i, uint64_t *h)
{
	const struct icicle_node *n = &((const struct icicle *)ctx)->nodes[i];

	*h = child_hash(n->parent, n->name, n->module, n->kernel);
	return i != ICICLE_ROOT; /* the root is nobody's child */
}

struct child_key {
	uint32_t parent;
	const char *name, *module;
	bool kernel;
};

static bool child_eq(const void *ctx, uint32_t i, const void *key)
{
	const struct icicle_node *n = &((const struct icicle *)ctx)->nodes[i];
	const struct child_key *k = key;

	return n->parent == k->parent && n->name == k->name && n->module == k->module &&
	       n->kernel == k->kernel;
}

static int node_reserve(struct icicle *t)
{
	struct icicle_priv *p = t->priv;

	if (array_grow((void **)&t->nodes, &p->cap, t->n + 1, sizeof(*t->nodes)) ||
	    array_grow((void **)&p->rep, &p->repcap, t->n + 1, sizeof(*p->rep)))
		return -ENOMEM;
	return 0;
}

/* The child of parent for (name, module, kernel) — interned pointers —
 * found or created. Returns the node index or -ENOMEM. */
static int64_t child_of(struct icicle *t, uint32_t parent, const char *name, const char *module,
			bool kernel, int tid)
{
	struct icicle_priv *p = t->priv;
	struct child_key k = {parent, name, module, kernel};
	struct icicle_node *n;
	int64_t id;
	size_t j;

	if (hashidx_reserve(&p->child, t->n, t->n, 1024, child_hash_of, t))
		return -ENOMEM;
	id = hashidx_find(&p->child, child_hash(parent, name, module, kernel), child_eq, t, &k, &j);
	if (id >= 0)
		return id;
	if (node_reserve(t))
		return -ENOMEM;
	n = &t->nodes[t->n];
	*n = (struct icicle_node){
	    .name = name,
	    .module = module,
	    .frame = ICICLE_NONE,
	    .parent = parent,
	    .first_child = ICICLE_NONE,
	    .next_sibling = t->nodes[parent].first_child,
	    .depth = t->nodes[parent].depth + 1,
	    .kernel = kernel,
	    .tid = tid,
	};
	t->nodes[parent].first_child = (uint32_t)t->n;
	p->rep[t->n] = 0;
	hashidx_set(&p->child, j, (uint32_t)t->n);
	return (int64_t)t->n++;
}

/* A build's end: the tree handed out, or freed on err. */
static int tree_done(struct icicle *t, int err, struct icicle **out)
{
	if (err) {
		icicle_free(t);
		return err;
	}
	*out = t;
	return 0;
}

static int tree_new(bool inverted, struct icicle **out)
{
	struct icicle *t = calloc(1, sizeof(*t));
	int err = 0;

	*out = NULL;
	if (!t || !(t->priv = calloc(1, sizeof(*t->priv))) || node_reserve(t)) {
		icicle_free(t);
		return -ENOMEM;
	}
	t->inverted = inverted;
	t->nodes[0] = (struct icicle_node){
	    .name = intern(t->priv, "all", &err),
	    .frame = ICICLE_NONE,
	    .parent = ICICLE_NONE,
	    .first_child = ICICLE_NONE,
	    .next_sibling = ICICLE_NONE,
	};
	t->n = 1;
	return tree_done(t, err, out);
}

void icicle_free(struct icicle *t)
{
	if (!t)
		return;
	if (t->priv) {
		strpool_free(&t->priv->pool);
		hashidx_free(&t->priv->child);
		free(t->priv->rep);
		free(t->priv);
	}
	free(t->nodes);
	free(t);
}

/* One frame of a path being inserted. */
struct pframe {
	const char *name, *module; /* interned */
	bool kernel;
	uint32_t frame;
};

/* The same function (names and modules are interned, so the pointers
 * say it). */
static bool same_function(const struct pframe *a, const struct pframe *b)
{
	return a->name == b->name && a->module == b->module && a->kernel == b->kernel;
}

/* Add one stack (path[0] = outermost caller) with c samples under start;
 * with fold_recursion a run of one function calling itself is one node. */
static int insert(struct icicle *t, uint32_t start, const struct pframe *path, size_t n, uint64_t c)
{
	uint32_t cur = start, first = ICICLE_NONE;
	size_t i, k;
	int64_t ch;

	const struct pframe *prev = NULL;
	uint32_t run = 0;

	t->nodes[ICICLE_ROOT].total += c;
	if (start != ICICLE_ROOT)
		t->nodes[start].total += c;
	for (i = 0; i < n; i++) {
		k = t->inverted ? n - 1 - i : i;
		if (t->fold_recursion && prev && same_function(prev, &path[k])) {
			/* A direct recursive call: counted on the node it repeats. */
			if (++run > t->nodes[cur].rec)
				t->nodes[cur].rec = run;
			continue;
		}
		prev = &path[k];
		run = 0;
		ch = child_of(t, cur, path[k].name, path[k].module, path[k].kernel,
			      t->nodes[cur].tid);
		if (ch < 0)
			return (int)ch;
		cur = (uint32_t)ch;
		t->nodes[cur].total += c;
		if (c > t->priv->rep[cur]) {
			t->priv->rep[cur] = c;
			t->nodes[cur].frame = path[k].frame;
		}
		if (first == ICICLE_NONE)
			first = cur;
	}
	/* Bottom-up, only the leaf function (first level) has self time. */
	if (t->inverted && first != ICICLE_NONE)
		t->nodes[first].self += c;
	else
		t->nodes[cur].self += c;
	return 0;
}

static int sib_cmp(const void *pa, const void *pb, void *arg)
{
	const struct icicle *t = arg;
	const struct icicle_node *a = &t->nodes[*(const uint32_t *)pa];
	const struct icicle_node *b = &t->nodes[*(const uint32_t *)pb];
	int r;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if ((r = strcmp(a->name, b->name)))
		return r;
	if (a->module != b->module)
		return !a->module ? -1 : !b->module ? 1 : strcmp(a->module, b->module);
	return (int)a->kernel - (int)b->kernel;
}

/* Order every sibling list heaviest first. */
static int sort_siblings(struct icicle *t)
{
	uint32_t *buf = malloc(t->n * sizeof(*buf)), c;
	size_t i, k, m;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		m = 0;
		for (c = t->nodes[i].first_child; c != ICICLE_NONE; c = t->nodes[c].next_sibling)
			buf[m++] = c;
		if (m < 2)
			continue;
		qsort_r(buf, m, sizeof(*buf), sib_cmp, t);
		t->nodes[i].first_child = buf[0];
		for (k = 0; k < m; k++)
			t->nodes[buf[k]].next_sibling = k + 1 < m ? buf[k + 1] : ICICLE_NONE;
	}
	free(buf);
	return 0;
}

/* A frame's label and module, as the top view names it (by function). */
static const char *frame_name(const struct frame *f, const char **module, char *buf, size_t size);

const char *icicle_frame_name(const struct frame *f, char *buf, size_t size)
{
	const char *module;

	return frame_name(f, &module, buf, size);
}

static const char *frame_name(const struct frame *f, const char **module, char *buf, size_t size)
{
	if (!f->has_sym) {
		*module = NULL;
		snprintf(buf, size, "0x%llx", (unsigned long long)f->pc);
		return buf;
	}
	*module = f->sym.module ? f->sym.module : "[unknown]";
	if (f->sym.func && f->sym.inlined) {
		snprintf(buf, size, "%s (inline)", f->sym.func);
		return buf;
	}
	if (f->sym.func)
		return f->sym.func;
	snprintf(buf, size, "%s+0x%llx", *module, (unsigned long long)f->sym.offset);
	return buf;
}

static size_t fmt_key(char kind, const char *module, const char *name, char *buf, size_t size)
{
	int r = snprintf(buf, size, "%c%s\x1f%s", kind, module ? module : "", name ? name : "");

	return r < 0 ? 0 : (size_t)r;
}

size_t icicle_node_key(const struct icicle *t, uint32_t node, char *buf, size_t size)
{
	const struct icicle_node *n = &t->nodes[node];
	char kind = t->per_thread && n->depth == 1 ? 't' : n->kernel ? 'k' : 'u';

	return fmt_key(kind, n->module, n->name, buf, size);
}

size_t icicle_key_of(const struct frame *f, char *buf, size_t size)
{
	const char *module, *name;
	char tmp[160];

	name = frame_name(f, &module, tmp, sizeof(tmp));
	return fmt_key(f->kernel ? 'k' : 'u', module, name, buf, size);
}

size_t icicle_frame_key(struct window *w, uint32_t frame, char *buf, size_t size)
{
	const struct frame *f = frames_get(window_frames(w), frame);

	if (!f) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	return icicle_key_of(f, buf, size);
}

/* Per frame id: its interned name/module, filled on first use. */
struct fcache {
	const char *name, *module;
	bool done;
};

static int frame_of(struct icicle *t, struct window *w, struct fcache *fc, uint32_t id,
		    struct pframe *out)
{
	const struct frame *f = frames_get(window_frames(w), id);
	char tmp[160];
	int err = 0;

	if (!fc[id].done) {
		const char *module, *name = frame_name(f, &module, tmp, sizeof(tmp));

		fc[id].name = intern(t->priv, name, &err);
		fc[id].module = intern(t->priv, module, &err);
		if (err)
			return err;
		fc[id].done = true;
	}
	*out = (struct pframe){
	    .name = fc[id].name, .module = fc[id].module, .kernel = f->kernel, .frame = id};
	return 0;
}

/* The child of the root for thread tid: "tid N", or as the query's
 * thread_label names it. */
static int64_t thread_node(struct icicle *t, int tid)
{
	char name[128];
	int err = 0;
	const char *s;
	int64_t r;

	name[0] = '\0';
	if (t->priv->thread_label)
		t->priv->thread_label(t->priv->label_ctx, tid, name, sizeof(name));
	if (!name[0])
		snprintf(name, sizeof(name), "tid %d", tid);
	if (!(s = intern(t->priv, name, &err)))
		return err ? err : -ENOMEM;
	r = child_of(t, ICICLE_ROOT, s, NULL, false, tid);
	if (r >= 0)
		t->nodes[r].tid = tid;
	return r;
}

/* The process whose root frame starts the stack ending at leaf, 0: none. */
static int stack_pid(struct window *w, uint32_t leaf)
{
	const struct window_node *wn = window_node(w, leaf);
	const struct frame *f;

	while (wn && wn->depth > 1)
		wn = window_node(w, wn->parent);
	f = wn ? frames_get(window_frames(w), wn->frame) : NULL;
	return f && frame_is_process(f) ? f->pid : 0;
}

/* Insert the stack ending at window node leaf (without its process root
 * frame when narrowed to a process: q->pid). */
static int add_stack(struct icicle *t, struct window *w, struct fcache *fc, uint32_t leaf, int tid,
		     uint64_t c, const struct icicle_query *q, struct pframe **path, size_t *cap)
{
	bool hide_kernel = q->hide_kernel;
	const struct window_node *wn = window_node(w, leaf);
	uint32_t start = ICICLE_ROOT, id;
	size_t n = 0, i;
	int64_t th;
	int err;

	if (array_grow((void **)path, cap, wn->depth + 1, sizeof(**path)))
		return -ENOMEM;
	/* Walk leaf → root, filling the path from its end. */
	i = wn->depth;
	for (id = leaf; id != WINDOW_ROOT; id = window_node(w, id)->parent) {
		wn = window_node(w, id);
		const struct frame *f = frames_get(window_frames(w), wn->frame);
		if ((hide_kernel && f->kernel) || (q->pid && frame_is_process(f)))
			continue;
		if ((err = frame_of(t, w, fc, wn->frame, &(*path)[--i])))
			return err;
		n++;
	}
	if (t->per_thread) {
		if ((th = thread_node(t, tid)) < 0)
			return (int)th;
		start = (uint32_t)th;
	}
	return insert(t, start, *path + i, n, c);
}

int icicle_build(struct window *w, const struct icicle_query *q, struct icicle **out)
{
	const struct window_count *wc;
	struct fcache *fc = NULL;
	struct pframe *path = NULL;
	uint64_t *per_leaf = NULL;
	struct icicle *t = NULL;
	size_t nc, i, cap = 0;
	int err;

	*out = NULL;
	if ((err = tree_new(q->inverted, &t)))
		return err;
	t->per_thread = q->per_thread_roots;
	t->fold_recursion = q->fold_recursion;
	t->priv->thread_label = q->thread_label;
	t->priv->label_ctx = q->label_ctx;
	wc = window_counts(w, &nc);
	err = -ENOMEM;
	if (!(fc = calloc(frames_span(window_frames(w)) + 1, sizeof(*fc))))
		goto out;
	/* Without per-thread roots sum the threads first: one walk per stack. */
	if (!t->per_thread && !(per_leaf = calloc(window_nnodes(w) + 1, sizeof(*per_leaf))))
		goto out;
	err = 0;
	for (i = 0; i < nc && !err; i++) {
		if (!wc[i].count || (q->tid && wc[i].tid != q->tid) ||
		    (q->pid && stack_pid(w, wc[i].node) != q->pid))
			continue;
		if (per_leaf)
			per_leaf[wc[i].node] += wc[i].count;
		else
			err =
			    add_stack(t, w, fc, wc[i].node, wc[i].tid, wc[i].count, q, &path, &cap);
	}
	for (i = 0; per_leaf && i < nc && !err; i++) {
		uint32_t leaf = wc[i].node;

		if (!per_leaf[leaf])
			continue;
		err = add_stack(t, w, fc, leaf, 0, per_leaf[leaf], q, &path, &cap);
		per_leaf[leaf] = 0; /* once per leaf */
	}
	if (!err)
		err = sort_siblings(t);
out:
	ARRAY_FREE_ALL(per_leaf, path, fc);
	return tree_done(t, err, out);
}

int icicle_build_from_paths(const struct icicle_stack *stacks, size_t n, bool inverted,
			    struct icicle **out)
{
	struct icicle_query q = {.inverted = inverted};

	return icicle_build_paths(stacks, n, &q, out);
}

int icicle_build_paths(const struct icicle_stack *stacks, size_t n, const struct icicle_query *q,
		       struct icicle **out)
{
	struct pframe path[512];
	struct icicle *t;
	char name[256];
	size_t i, k, len;
	const char *s, *e;
	int err;

	*out = NULL;
	if ((err = tree_new(q->inverted, &t)))
		return err;
	t->fold_recursion = q->fold_recursion;
	for (i = 0; i < n && !err; i++) {
		k = 0;
		for (s = stacks[i].frames; *s && k < 512; s = *e ? e + 1 : e) {
			e = strchr(s, ';');
			if (!e)
				e = s + strlen(s);
			len = (size_t)(e - s) < sizeof(name) ? (size_t)(e - s) : sizeof(name) - 1;
			memcpy(name, s, len);
			name[len] = 0;
			path[k] = (struct pframe){.name = intern(t->priv, name, &err),
						  .frame = ICICLE_NONE};
			if (err)
				break;
			k++;
		}
		if (!err)
			err = insert(t, ICICLE_ROOT, path, k, stacks[i].count);
	}
	if (!err)
		err = sort_siblings(t);
	return tree_done(t, err, out);
}

uint32_t icicle_child_by_key(const struct icicle *t, uint32_t parent, const char *key)
{
	char buf[1024];
	uint32_t c;

	for (c = t->nodes[parent].first_child; c != ICICLE_NONE; c = t->nodes[c].next_sibling) {
		icicle_node_key(t, c, buf, sizeof(buf));
		if (strcmp(buf, key) == 0)
			return c;
	}
	return ICICLE_NONE;
}

bool icicle_is_ancestor(const struct icicle *t, uint32_t anc, uint32_t node)
{
	while (node != ICICLE_NONE && node < t->n) {
		if (node == anc)
			return true;
		if (t->nodes[node].depth <= (anc < t->n ? t->nodes[anc].depth : 0))
			return false;
		node = t->nodes[node].parent;
	}
	return false;
}

void icicle_path_free(struct icicle_path *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->keys[i]);
	free(p->keys);
	p->keys = NULL;
	p->n = 0;
}

int icicle_path_of(const struct icicle *t, uint32_t node, struct icicle_path *p)
{
	struct icicle_path np = {0};
	char buf[1024];
	size_t d, i;

	if (node >= t->n)
		node = ICICLE_ROOT;
	d = t->nodes[node].depth;
	if (d && !(np.keys = calloc(d, sizeof(*np.keys))))
		return -ENOMEM;
	np.n = d;
	for (i = d; i > 0; i--, node = t->nodes[node].parent) {
		icicle_node_key(t, node, buf, sizeof(buf));
		if (!(np.keys[i - 1] = strdup(buf))) {
			icicle_path_free(&np);
			return -ENOMEM;
		}
	}
	icicle_path_free(p);
	*p = np;
	return 0;
}

int icicle_path_copy(const struct icicle_path *src, struct icicle_path *dst)
{
	struct icicle_path np = {0};

	if (src == dst)
		return 0;
	if (src->n && !(np.keys = calloc(src->n, sizeof(*np.keys))))
		return -ENOMEM;
	for (np.n = 0; np.n < src->n; np.n++) {
		if (!(np.keys[np.n] = strdup(src->keys[np.n]))) {
			icicle_path_free(&np);
			return -ENOMEM;
		}
	}
	icicle_path_free(dst);
	*dst = np;
	return 0;
}

uint32_t icicle_path_resolve(const struct icicle *t, const struct icicle_path *p, size_t *matched)
{
	uint32_t cur = ICICLE_ROOT, c;
	size_t i;

	for (i = 0; i < p->n; i++) {
		if ((c = icicle_child_by_key(t, cur, p->keys[i])) == ICICLE_NONE)
			break;
		cur = c;
	}
	if (matched)
		*matched = i;
	return cur;
}

static int box_push(struct icicle_box **b, size_t *n, size_t *cap, struct icicle_box v)
{
	if (array_grow((void **)b, cap, *n + 1, sizeof(**b)))
		return -ENOMEM;
	(*b)[(*n)++] = v;
	return 0;
}

/* Scratch for one parent's children during layout. */
struct lay {
	uint32_t *kid;
	int *w;
	int *floor; /* a donor keeps at least this many columns */
	int *wide;  /* indices of children at least 2 columns wide */
	size_t kidcap, wcap, floorcap, widecap;
};

static int lay_reserve(struct lay *l, size_t m, size_t wmax)
{
	if (array_grow((void **)&l->kid, &l->kidcap, m, sizeof(*l->kid)) ||
	    array_grow((void **)&l->w, &l->wcap, m, sizeof(*l->w)) ||
	    array_grow((void **)&l->floor, &l->floorcap, m, sizeof(*l->floor)) ||
	    array_grow((void **)&l->wide, &l->widecap, wmax, sizeof(*l->wide)))
		return -ENOMEM;
	return 0;
}

/* Give each child that rounded to nothing one column, heaviest first: from
 * the parent's free columns (its self time), else from the widest sibling
 * as long as it gives up at most 1/32 of its width (a thin bar must not
 * make what is hot look smaller: the view is read for shares), else from
 * the lightest sibling that has only one column. Stops when none is left:
 * the rest cannot fit. */
static void give_thin_bars(struct lay *l, size_t m, int free)
{
	size_t i, nw = 0, k, last = m;
	int best, j;

	for (i = 0; i < m; i++)
		if (l->w[i] >= 2)
			l->wide[nw++] = (int)i;
	for (i = 0; i < m; i++) {
		if (l->w[i] > 0)
			continue;
		if (free > 0) {
			free--;
			l->w[i] = 1;
			continue;
		}
		best = -1;
		for (k = 0; k < nw; k++) {
			j = l->wide[k];
			if (l->w[j] > l->floor[j] && (best < 0 || l->w[j] > l->w[best]))
				best = j;
		}
		if (best >= 0) {
			l->w[best]--;
			l->w[i] = 1;
			continue;
		}
		while (last > i + 1 && l->w[last - 1] != 1)
			last--;
		if (last <= i + 1)
			break;
		l->w[--last] = 0;
		l->w[i] = 1;
	}
}

/* Place the children of box pb: cumulative rounding, then thin bars. */
static int layout_children(const struct icicle *t, struct icicle_box pb, struct lay *l,
			   struct icicle_box **b, size_t *n, size_t *cap)
{
	uint64_t T = t->nodes[pb.node].total, cum = 0;
	int W = pb.x1 - pb.x0, prev = 0, end, used = 0, pos;
	size_t m = 0, i;
	uint32_t c;

	if (!T || W <= 0)
		return 0;
	for (c = t->nodes[pb.node].first_child; c != ICICLE_NONE; c = t->nodes[c].next_sibling)
		if (t->nodes[c].total)
			m++;
	if (!m)
		return 0;
	if (lay_reserve(l, m, (size_t)W))
		return -ENOMEM;
	m = 0;
	for (c = t->nodes[pb.node].first_child; c != ICICLE_NONE; c = t->nodes[c].next_sibling) {
		if (!t->nodes[c].total)
			continue;
		cum += t->nodes[c].total;
		/* round(W * cum / T), exact in 128 bits */
		end = (int)(((unsigned __int128)W * cum * 2 + T) / ((unsigned __int128)T * 2));
		l->kid[m] = c;
		l->w[m] = end - prev;
		l->floor[m] = l->w[m] - l->w[m] / 32;
		if (l->floor[m] < 1)
			l->floor[m] = 1;
		m++;
		used += end - prev;
		prev = end;
	}
	give_thin_bars(l, m, W - used);
	pos = pb.x0;
	for (i = 0; i < m; i++) {
		if (!l->w[i])
			continue;
		if (box_push(
			b, n, cap,
			(struct icicle_box){
			    .node = l->kid[i], .row = pb.row + 1, .x0 = pos, .x1 = pos + l->w[i]}))
			return -ENOMEM;
		pos += l->w[i];
	}
	return 0;
}

int icicle_layout(const struct icicle *t, uint32_t zoom_node, int width, int max_depth,
		  struct icicle_box **boxes, size_t *n)
{
	struct icicle_box *b = NULL;
	struct lay l = {0};
	size_t nb = 0, cap = 0, i;
	int err = 0;

	*boxes = NULL;
	*n = 0;
	if (!(b = malloc(sizeof(*b))))
		return -ENOMEM;
	cap = 1;
	if (zoom_node < t->n && t->nodes[zoom_node].total && width > 0 && max_depth > 0) {
		b[nb++] = (struct icicle_box){.node = zoom_node, .row = 0, .x0 = 0, .x1 = width};
		for (i = 0; i < nb && !err; i++)
			if (b[i].row + 1 < max_depth)
				err = layout_children(t, b[i], &l, &b, &nb, &cap);
	}
	ARRAY_FREE_ALL(l.kid, l.w, l.floor, l.wide);
	if (err) {
		free(b);
		return err;
	}
	*boxes = b;
	*n = nb;
	return 0;
}
