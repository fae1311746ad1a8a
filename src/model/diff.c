/*
 * diff — compare two sets of saved profiles function by function (own and
 * total share) and call path by call path, with a significance test per
 * share (see diff.h for the statistics and why).
 *
 * How: each side is a snapshot, a trie of stacks with (file, second,
 * count) cells at their leaves, filled from profile files
 * (formats/diffload.c) or from a window. Each trie node gets its row (the
 * function's key — (kernel, function), plus (file, line) with lines —
 * interned as a string) and, for the icicle, its call path. Each cell then
 * adds its count to three measures of its side, each a sum per (key, file,
 * second): own (the leaf's row), total (every distinct row of the stack,
 * once) and paths (every prefix of the stack, top-down and bottom-up).
 * Once both sides are in, each measure's cells are sorted by key, so a
 * key's per-unit counts are one run of the array; the test then turns
 * counts into shares per unit (second or file) and compares the two sides'
 * shares. Rows and paths keep copies of their names: the snapshots (and
 * whatever they were taken from) may be freed once diff_compare returns.
 */
#include "stacktop/model/diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/stats.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/model/icicle.h"
#include "stacktop/model/window.h"

#define DIFF_SMALL_UNIT 0.25 /* of the median: partial seconds left out */
#define SNAP_ROOT UINT32_MAX /* parent of a snapshot's outermost frames */
#define NO_ID UINT32_MAX     /* a trie node without a row (a hidden kernel frame) */

/* ---- snapshots ---------------------------------------------------------- */

/* A frame of a snapshot's trie: its parent and its names (pooled in the
 * snapshot, so equal names are equal pointers). Parents come first. */
struct snap_node {
	uint32_t parent;		 /* SNAP_ROOT for outermost */
	const char *func, *file, *label; /* func and file may be NULL */
	int line;
	bool kernel;
};

struct snap_cell {
	uint32_t leaf; /* node */
	uint32_t fileno;
	int32_t second; /* -1: the file has no time */
	uint64_t count;
};

struct diff_snap {
	struct strpool names;
	struct snap_node *nodes;
	size_t nnodes, capnodes;
	struct hashidx nix; /* (parent, names) → node */
	struct snap_cell *cells;
	size_t ncells, cap;
	uint32_t nfiles;
	struct summary summary; /* sum over the files that have one */
	size_t nsummaries;
};

/* Each field mixed in turn: func and label are often the same pointer,
 * which a plain xor of the two would cancel. */
static uint64_t node_hash(const struct snap_node *n)
{
	uint64_t h = hashidx_mix64(n->parent);

	h = hashidx_mix64(h ^ (uint64_t)(uintptr_t)n->func);
	h = hashidx_mix64(h ^ (uint64_t)(uintptr_t)n->file);
	h = hashidx_mix64(h ^ (uint64_t)(uintptr_t)n->label);
	return hashidx_mix64(h ^ ((uint64_t)(unsigned)n->line << 1 | n->kernel));
}

static bool node_hash_of(const void *ctx, uint32_t id, uint64_t *h)
{
	*h = node_hash(&((const struct diff_snap *)ctx)->nodes[id]);
	return true;
}

static bool node_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct snap_node *a = &((const struct diff_snap *)ctx)->nodes[id], *b = key;

	return a->parent == b->parent && a->func == b->func && a->file == b->file &&
	       a->label == b->label && a->line == b->line && a->kernel == b->kernel;
}

/* The node of names func, file, label (NULL func or file: none) at line
 * under parent, made when new (the names copied into sn's pool); -ENOMEM. */
static int64_t snap_node_named(struct diff_snap *sn, uint32_t parent, const char *func,
			       const char *file, const char *label, int line, bool kernel)
{
	struct snap_node k = {.parent = parent, .line = line, .kernel = kernel};
	size_t slot;
	int64_t i;

	if ((func && !(k.func = strpool_cstr(&sn->names, func))) ||
	    (file && !(k.file = strpool_cstr(&sn->names, file))) ||
	    !(k.label = strpool_cstr(&sn->names, label ? label : "?")))
		return -ENOMEM;
	if (hashidx_reserve(&sn->nix, sn->nnodes, sn->nnodes, 256, node_hash_of, sn))
		return -ENOMEM;
	if ((i = hashidx_find(&sn->nix, node_hash(&k), node_eq, sn, &k, &slot)) >= 0)
		return i;
	if (sn->nnodes >= NO_ID - 1 ||
	    array_grow((void **)&sn->nodes, &sn->capnodes, sn->nnodes + 1, sizeof(*sn->nodes)))
		return -ENOMEM;
	sn->nodes[sn->nnodes] = k;
	hashidx_set(&sn->nix, slot, (uint32_t)sn->nnodes);
	return (int64_t)sn->nnodes++;
}

/* The node for frame f under parent, made when new; -ENOMEM. */
static int64_t snap_node_of(struct diff_snap *sn, uint32_t parent, const struct frame *f)
{
	char buf[200];
	const char *label = icicle_frame_name(f, buf, sizeof(buf));

	return snap_node_named(sn, parent, f->sym.func, f->sym.file, label, f->sym.line, f->kernel);
}

static int cell_push(struct diff_snap *sn, uint32_t leaf, uint32_t fileno, int32_t second,
		     uint64_t count)
{
	if (array_grow((void **)&sn->cells, &sn->cap, sn->ncells + 1, sizeof(*sn->cells)))
		return -ENOMEM;
	sn->cells[sn->ncells++] =
	    (struct snap_cell){.leaf = leaf, .fileno = fileno, .second = second, .count = count};
	return 0;
}

int diff_snap_new(struct diff_snap **out)
{
	return (*out = calloc(1, sizeof(**out))) ? 0 : -ENOMEM;
}

void diff_snap_free(struct diff_snap *sn)
{
	if (!sn)
		return;
	strpool_free(&sn->names);
	hashidx_free(&sn->nix);
	free(sn->nodes);
	free(sn->cells);
	free(sn);
}

int diff_snap_file(struct diff_snap *sn, const struct summary *sum)
{
	if (sn->nfiles >= DIFF_MAX_FILES)
		return -EINVAL;
	if (sum) {
		struct summary *m = &sn->summary;
		m->wall_s += sum->wall_s;
		m->cpu_s += sum->cpu_s;
		m->avg_cpu += sum->avg_cpu;
		m->peak_cpu += sum->peak_cpu;
		m->peak_rss += sum->peak_rss;
		sn->nsummaries++;
	}
	sn->nfiles++;
	return 0;
}

int diff_snap_add(struct diff_snap *sn, const struct frames *fr, const uint32_t *ids, size_t n,
		  int32_t second, uint64_t count)
{
	uint32_t parent = SNAP_ROOT;
	const struct frame *f;
	int64_t id;

	if (!sn->nfiles)
		return -EINVAL;
	for (size_t i = 0; i < n && (f = frames_get(fr, ids[i])); i++) {
		if ((id = snap_node_of(sn, parent, f)) < 0)
			return (int)id;
		parent = (uint32_t)id;
	}
	/* an empty stack has no function to count for */
	return parent == SNAP_ROOT ? 0 : cell_push(sn, parent, sn->nfiles - 1, second, count);
}

int diff_snap_merge(struct diff_snap *dst, const struct diff_snap *src, int32_t second)
{
	uint32_t *map;
	int rc = 0;

	if (!dst->nfiles)
		return -EINVAL;
	if (!(map = malloc((src->nnodes ? src->nnodes : 1) * sizeof(*map))))
		return -ENOMEM;
	/* Parents come first: each node's parent is mapped before it. */
	for (size_t i = 0; i < src->nnodes && !rc; i++) {
		const struct snap_node *nd = &src->nodes[i];
		uint32_t parent = nd->parent == SNAP_ROOT ? SNAP_ROOT : map[nd->parent];
		int64_t id = snap_node_named(dst, parent, nd->func, nd->file, nd->label, nd->line,
					     nd->kernel);
		if (id < 0)
			rc = (int)id;
		else
			map[i] = (uint32_t)id;
	}
	for (size_t c = 0; c < src->ncells && !rc; c++)
		rc = cell_push(dst, map[src->cells[c].leaf], dst->nfiles - 1, second,
			       src->cells[c].count);
	free(map);
	return rc;
}

size_t diff_snap_bytes(const struct diff_snap *sn)
{
	size_t b = sizeof(*sn) + sn->capnodes * sizeof(*sn->nodes) + sn->cap * sizeof(*sn->cells) +
		   (sn->nix.mask ? (sn->nix.mask + 1) * sizeof(*sn->nix.slot) : 0) +
		   (sn->names.ix.mask ? (sn->names.ix.mask + 1) * sizeof(uint32_t) : 0) +
		   sn->names.cap * sizeof(char *);

	for (size_t i = 0; i < sn->names.n; i++)
		b += sn->names.s[i] ? strlen(sn->names.s[i]) + 1 + 16 : 0;
	return b;
}

uint64_t diff_snap_samples(const struct diff_snap *sn)
{
	uint64_t n = 0;

	for (size_t c = 0; c < sn->ncells; c++)
		n += sn->cells[c].count;
	return n;
}

/* The snapshot node of window node leaf (its callers made first; memo[id]
 * is a window node's snapshot node + 1, 0 until made). -ENOENT for a stack
 * with a frame the table no longer has, -ENOMEM. */
static int64_t snap_wnode(struct diff_snap *sn, struct window *w, uint32_t *memo, uint32_t **chain,
			  size_t *cap, uint32_t leaf)
{
	uint32_t id = leaf, parent = SNAP_ROOT;
	const struct window_node *nd;
	size_t n = 0;

	while (id != WINDOW_ROOT && !memo[id]) {
		if (!(nd = window_node(w, id)) ||
		    array_grow((void **)chain, cap, n + 1, sizeof(**chain)))
			return nd ? -ENOMEM : -ENOENT;
		(*chain)[n++] = id;
		id = nd->parent;
	}
	if (id != WINDOW_ROOT)
		parent = memo[id] - 1;
	while (n--) {
		const struct frame *f;
		int64_t s;

		nd = window_node(w, (*chain)[n]);
		if (!(f = frames_get(window_frames(w), nd->frame)))
			return -ENOENT;
		if ((s = snap_node_of(sn, parent, f)) < 0)
			return s;
		memo[(*chain)[n]] = (uint32_t)s + 1;
		parent = (uint32_t)s;
	}
	return parent;
}

int diff_snap_window(struct window *w, uint64_t now_ns, unsigned seconds, bool lines,
		     struct diff_snap **out)
{
	uint64_t newest = now_ns / window_bucket_ns(w), num;
	const struct window_count *wc;
	struct diff_snap *sn;
	uint32_t *memo, *chain = NULL;
	size_t n, cap = 0;
	int64_t leaf;
	int rc = 0;

	if (lines && (rc = window_resolve_lines(w, 0)))
		return rc;
	if ((rc = diff_snap_new(&sn)))
		return rc;
	if (!(memo = calloc(window_nnodes(w) + 1, sizeof(*memo)))) {
		diff_snap_free(sn);
		return -ENOMEM;
	}
	sn->nfiles = 1;
	for (size_t k = 0; k < window_nbuckets(w) && !rc; k++) {
		if (!(wc = window_bucket_counts(w, k, &num, &n)) || num > newest ||
		    num + seconds <= newest)
			continue;
		for (size_t i = 0; i < n && !rc; i++) {
			if (wc[i].node == WINDOW_ROOT || wc[i].node >= window_nnodes(w))
				continue;
			if ((leaf = snap_wnode(sn, w, memo, &chain, &cap, wc[i].node)) == -ENOENT)
				continue;
			rc = leaf < 0
				 ? (int)leaf
				 : cell_push(sn, (uint32_t)leaf, 0,
					     (int32_t)(num + seconds - newest - 1), wc[i].count);
		}
	}
	free(memo);
	free(chain);
	if (rc) {
		diff_snap_free(sn);
		return rc;
	}
	*out = sn;
	return 0;
}

/* ---- the comparison ------------------------------------------------------ */

/* A measure's count of one key (row or path) in one (file, second). */
struct cell {
	uint32_t key;
	uint32_t file;
	int32_t second; /* -1: the file has no time */
	uint64_t count;
};

/* One measure of one side: its cells, summed per (key, file, second). */
struct acc {
	struct cell *cells;
	size_t n, cap;
	struct hashidx ix;
};

enum { M_OWN, M_TOTAL, M_PATH, M_N };

struct side_acc {
	struct acc m[M_N];
	int32_t maxsec[DIFF_MAX_FILES]; /* per file, -1 when untimed */
	uint64_t untimed;		/* bit per file: a cell without a second */
	size_t nfiles;
};

struct diff_impl {
	struct diff pub; /* first: diff_free casts */
	struct strpool names;
	struct hashidx pix; /* (parent, kernel, name) → path */
};

struct builder {
	struct diff_impl *d;
	const struct diff_opts *o;
	struct strpool keys;
	size_t caprows, cappaths;
	uint32_t *stamp; /* per row: the last cell that counted it in total */
	uint32_t ncell;
	struct side_acc side[2];
};

static uint64_t cell_hash(uint32_t key, uint32_t file, int32_t second)
{
	return hashidx_mix64(hashidx_mix64((uint64_t)key << 32 | file) ^ (uint32_t)second);
}

static bool cell_hash_of(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct cell *c = &((const struct acc *)ctx)->cells[id];

	*h = cell_hash(c->key, c->file, c->second);
	return true;
}

static bool cell_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct cell *a = &((const struct acc *)ctx)->cells[id], *b = key;

	return a->key == b->key && a->file == b->file && a->second == b->second;
}

static int acc_add(struct acc *a, uint32_t key, uint32_t file, int32_t second, uint64_t count)
{
	struct cell k = {.key = key, .file = file, .second = second, .count = count};
	size_t slot;
	int64_t i;

	if (hashidx_reserve(&a->ix, a->n, a->n, 256, cell_hash_of, a))
		return -ENOMEM;
	if ((i = hashidx_find(&a->ix, cell_hash(key, file, second), cell_eq, a, &k, &slot)) >= 0) {
		a->cells[i].count += count;
		return 0;
	}
	if (a->n >= UINT32_MAX - 1 ||
	    array_grow((void **)&a->cells, &a->cap, a->n + 1, sizeof(*a->cells)))
		return -ENOMEM;
	a->cells[a->n] = k;
	hashidx_set(&a->ix, slot, (uint32_t)a->n);
	a->n++;
	return 0;
}

static void acc_free(struct acc *a)
{
	free(a->cells);
	hashidx_free(&a->ix);
}

int diff_split_list(char *buf, const char **paths, size_t max, size_t *n)
{
	char *p = buf;

	*n = 0;
	for (;;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p || *n == max)
			return -EINVAL;
		paths[(*n)++] = p;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static const char *name_copy(struct builder *b, const char *s)
{
	return s ? strpool_cstr(&b->d->names, s) : NULL;
}

/* The row of a snapshot node's function (made when new); -ENOMEM. */
static int64_t row_of(struct builder *b, const struct snap_node *c)
{
	const char *func = c->func ? c->func : c->label;
	char key[1024];
	int64_t k;
	int n;

	/* Not the module: folded files do not name it, and a folded base
	 * must still meet its pprof new. */
	if (b->o->lines)
		n = snprintf(key, sizeof(key), "%d\x1f%s\x1f%s\x1f%d", c->kernel, func,
			     c->file ? c->file : "", c->line);
	else
		n = snprintf(key, sizeof(key), "%d\x1f%s", c->kernel, func);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(key))
		n = sizeof(key) - 1; /* a longer name shares a row with its prefix */
	if ((k = strpool_index(&b->keys, key, (size_t)n)) < 0)
		return k;
	if ((size_t)k < b->d->pub.nrows)
		return k;
	/* New: the row, and its stamp. */
	if (array_grow((void **)&b->d->pub.rows, &b->caprows, (size_t)k + 1,
		       sizeof(struct diff_row)))
		return -ENOMEM;
	uint32_t *st = realloc(b->stamp, b->caprows * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[k] = UINT32_MAX;
	b->stamp = st;
	struct diff_row *r = &b->d->pub.rows[k];
	*r = (struct diff_row){.func = name_copy(b, func),
			       .file = b->o->lines && c->file ? name_copy(b, c->file) : NULL,
			       .line = b->o->lines ? c->line : 0,
			       .kernel = c->kernel};
	if (!r->func || (b->o->lines && c->file && !r->file))
		return -ENOMEM;
	b->d->pub.nrows = (size_t)k + 1;
	return k;
}

/* ---- paths: (parent, kernel, name) in a hash over the diff's array ---- */

struct path_key {
	uint32_t parent;
	bool kernel;
	const char *name;
};

static uint64_t path_hash(uint32_t parent, bool kernel, const char *name)
{
	return hashidx_mix64(((uint64_t)parent << 1 | kernel) ^ strpool_hash(name, strlen(name)));
}

static bool path_hash_of(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct diff_path *p = &((const struct diff *)ctx)->paths[id];

	*h = path_hash(p->parent, p->kernel, p->name);
	return true;
}

static bool path_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct diff_path *p = &((const struct diff *)ctx)->paths[id];
	const struct path_key *k = key;

	return p->parent == k->parent && p->kernel == k->kernel && !strcmp(p->name, k->name);
}

int64_t diff_path_find(const struct diff *d, uint32_t parent, const char *name, bool kernel)
{
	const struct diff_impl *di = (const struct diff_impl *)d;
	struct path_key k = {.parent = parent, .kernel = kernel, .name = name};

	if (!d || !name)
		return -1;
	return hashidx_find(&di->pix, path_hash(parent, kernel, name), path_eq, d, &k, NULL);
}

/* The path parent + node's function, made when new; -ENOMEM. */
static int64_t path_of(struct builder *b, uint32_t parent, const struct snap_node *nd)
{
	struct diff *d = &b->d->pub;
	struct path_key k = {.parent = parent, .kernel = nd->kernel, .name = nd->label};
	size_t slot;
	int64_t i;

	if (hashidx_reserve(&b->d->pix, d->npaths, d->npaths, 256, path_hash_of, d))
		return -ENOMEM;
	if ((i = hashidx_find(&b->d->pix, path_hash(parent, nd->kernel, nd->label), path_eq, d, &k,
			      &slot)) >= 0)
		return i;
	if (d->npaths >= DIFF_PATH_BOTTOM ||
	    array_grow((void **)&d->paths, &b->cappaths, d->npaths + 1, sizeof(*d->paths)))
		return -ENOMEM;
	d->paths[d->npaths] = (struct diff_path){
	    .parent = parent, .name = name_copy(b, nd->label), .kernel = nd->kernel};
	if (!d->paths[d->npaths].name)
		return -ENOMEM;
	hashidx_set(&b->d->pix, slot, (uint32_t)d->npaths);
	return (int64_t)d->npaths++;
}

/* Per snapshot node: its row (NO_ID: hidden), its nearest shown caller
 * (SNAP_ROOT: none) and its top-down path. */
struct node_info {
	uint32_t row, up, down;
};

static int node_infos(struct builder *b, const struct diff_snap *sn, struct node_info *ni)
{
	for (size_t i = 0; i < sn->nnodes; i++) {
		const struct snap_node *nd = &sn->nodes[i];
		uint32_t p = nd->parent;
		int64_t r;

		/* a hidden parent stands for its own nearest shown caller */
		ni[i].up = p == SNAP_ROOT ? SNAP_ROOT : ni[p].row == NO_ID ? ni[p].up : (uint32_t)p;
		ni[i].row = ni[i].down = NO_ID;
		if (b->o->hide_kernel && nd->kernel)
			continue;
		if ((r = row_of(b, nd)) < 0)
			return (int)r;
		ni[i].row = (uint32_t)r;
		if (b->o->paths_down) {
			uint32_t pp = ni[i].up == SNAP_ROOT ? DIFF_PATH_TOP : ni[ni[i].up].down;
			if ((r = path_of(b, pp, nd)) < 0)
				return (int)r;
			ni[i].down = (uint32_t)r;
		}
	}
	return 0;
}

/* One stack's cell into the side's measures: own for its leaf's row, total
 * for each distinct row on it, and each of its paths. */
static int cell_add(struct builder *b, int s, const struct diff_snap *sn,
		    const struct node_info *ni, const struct snap_cell *c)
{
	struct side_acc *a = &b->side[s];
	uint32_t leaf = ni[c->leaf].row == NO_ID ? ni[c->leaf].up : c->leaf, up = DIFF_PATH_BOTTOM;
	uint32_t stamp = b->ncell++;
	int64_t p;
	int rc;

	if (leaf == SNAP_ROOT)
		return 0; /* all in the kernel, kernel hidden */
	b->d->pub.side[s].samples += c->count;
	if ((rc = acc_add(&a->m[M_OWN], ni[leaf].row, c->fileno, c->second, c->count)))
		return rc;
	for (uint32_t n = leaf; n != SNAP_ROOT; n = ni[n].up) {
		uint32_t r = ni[n].row;
		if (b->stamp[r] != stamp) { /* recursion counts once */
			b->stamp[r] = stamp;
			if ((rc = acc_add(&a->m[M_TOTAL], r, c->fileno, c->second, c->count)))
				return rc;
		}
		if (b->o->paths_down &&
		    (rc = acc_add(&a->m[M_PATH], ni[n].down, c->fileno, c->second, c->count)))
			return rc;
		if (b->o->paths_up) {
			if ((p = path_of(b, up, &sn->nodes[n])) < 0)
				return (int)p;
			up = (uint32_t)p;
			if ((rc = acc_add(&a->m[M_PATH], up, c->fileno, c->second, c->count)))
				return rc;
		}
	}
	return 0;
}

/* A snapshot into side s of the builder. */
static int side_add(struct builder *b, int s, const struct diff_snap *sn)
{
	struct side_acc *a = &b->side[s];
	struct diff_side *ds = &b->d->pub.side[s];
	struct node_info *ni = calloc(sn->nnodes + 1, sizeof(*ni));
	int rc;

	if (!ni)
		return -ENOMEM;
	a->nfiles = ds->nfiles = sn->nfiles;
	for (uint32_t f = 0; f < sn->nfiles; f++)
		a->maxsec[f] = -1;
	a->untimed = 0;
	rc = node_infos(b, sn, ni);
	for (size_t i = 0; i < sn->ncells && !rc; i++) {
		const struct snap_cell *c = &sn->cells[i];
		if (c->second < 0)
			a->untimed |= 1ull << c->fileno;
		else if (c->second > a->maxsec[c->fileno])
			a->maxsec[c->fileno] = c->second;
		rc = cell_add(b, s, sn, ni, c);
	}
	free(ni);
	for (uint32_t f = 0; f < sn->nfiles; f++)
		if (a->untimed & (1ull << f))
			a->maxsec[f] = -1;
	ds->summary = sn->summary;
	ds->nsummaries = sn->nsummaries;
	return rc;
}

static int cmp_cell(const void *x, const void *y)
{
	const struct cell *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->second > b->second) - (a->second < b->second);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

/* The test's observation units of one side: the distinct (file, second)
 * pairs that hold samples (or files, when the test is per file), sorted,
 * with their totals and which take part (partial seconds do not). Sparse:
 * a hostile "second" label costs nothing, and a key's share vector is
 * never built (only its sum and sum of squares over the units). */
struct unit {
	uint32_t file;
	int32_t second;
	uint64_t total;
	bool keep;
};

struct units {
	struct unit *u;
	size_t n, nkept;
};

static int cmp_unit(const void *x, const void *y)
{
	const struct unit *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->second > b->second) - (a->second < b->second);
}

static int32_t unit_second(const struct cell *c, bool seconds)
{
	return seconds ? c->second : -1;
}

/* The unit of a cell (binary search); always found for own cells, and a
 * total or path cell's unit is one of those. */
static struct unit *unit_of(const struct units *u, const struct cell *c, bool seconds)
{
	struct unit k = {.file = c->file, .second = unit_second(c, seconds)};
	return bsearch(&k, u->u, u->n, sizeof(*u->u), cmp_unit);
}

/* From the own cells: every sample is in exactly one. */
static int units_build(struct units *u, const struct acc *a, bool seconds)
{
	uint64_t *sorted;
	size_t nz = 0, m = 0;

	u->n = u->nkept = 0;
	if (!(u->u = calloc(a->n + 1, sizeof(*u->u))))
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++)
		u->u[i] = (struct unit){.file = a->cells[i].file,
					.second = unit_second(&a->cells[i], seconds)};
	qsort(u->u, a->n, sizeof(*u->u), cmp_unit);
	for (size_t i = 0; i < a->n; i++)
		if (!m || cmp_unit(&u->u[m - 1], &u->u[i]))
			u->u[m++] = u->u[i];
	u->n = m;
	for (size_t i = 0; i < a->n; i++)
		unit_of(u, &a->cells[i], seconds)->total += a->cells[i].count;
	if (!(sorted = calloc(u->n + 1, sizeof(*sorted))))
		return -ENOMEM;
	for (size_t i = 0; i < u->n; i++)
		if (u->u[i].total)
			sorted[nz++] = u->u[i].total;
	qsort(sorted, nz, sizeof(*sorted), cmp_u64);
	uint64_t median = nz ? sorted[nz / 2] : 0;
	free(sorted);
	for (size_t i = 0; i < u->n; i++) {
		u->u[i].keep =
		    u->u[i].total > 0 &&
		    (!seconds || (double)u->u[i].total >= DIFF_SMALL_UNIT * (double)median);
		u->nkept += u->u[i].keep;
	}
	return 0;
}

static void units_free(struct units *u)
{
	free(u->u);
}

/* One key's shares over the kept units of a side, as moments (units
 * without the key count as share 0), from its run of cells [*pos, ...),
 * sorted by (key, file, second); its count over all units in *count. */
struct moments {
	size_t n;
	double mean, var;
};

static struct moments key_moments(const struct units *u, const struct acc *a, size_t *pos,
				  uint32_t key, bool seconds, uint64_t *count)
{
	double sum = 0, sq = 0;
	struct moments mo = {.n = u->nkept};

	*count = 0;
	while (*pos < a->n && a->cells[*pos].key == key) {
		const struct unit *un = unit_of(u, &a->cells[*pos], seconds);
		uint64_t c = 0;
		/* cells of one unit are next to each other in the run */
		do
			c += a->cells[(*pos)++].count;
		while (*pos < a->n && a->cells[*pos].key == key &&
		       unit_of(u, &a->cells[*pos], seconds) == un);
		*count += c;
		if (un && un->keep) {
			double sh = (double)c / (double)un->total;
			sum += sh;
			sq += sh * sh;
		}
	}
	if (mo.n) {
		mo.mean = sum / (double)mo.n;
		mo.var =
		    mo.n > 1 ? (sq - (double)mo.n * mo.mean * mo.mean) / (double)(mo.n - 1) : 0;
		if (mo.var < 0)
			mo.var = 0; /* rounding */
	}
	return mo;
}

static enum diff_test pick_test(struct diff *d, const struct builder *b)
{
	for (int s = 0; s < 2; s++) {
		d->side[s].timed = b->side[s].nfiles > 0;
		for (size_t f = 0; f < b->side[s].nfiles; f++)
			if (b->side[s].maxsec[f] < 0)
				d->side[s].timed = false;
	}
	if (d->side[0].timed && d->side[1].timed)
		return DIFF_TEST_SECONDS;
	if (d->side[0].nfiles >= 2 && d->side[1].nfiles >= 2)
		return DIFF_TEST_FILES;
	return DIFF_TEST_SAMPLES;
}

/* The shares and p-values of measure m's nkeys keys into sh[], and each
 * key's count per side into cnt[2][key]. */
static void measure_test(struct builder *b, const struct units u[2], int m, size_t nkeys,
			 struct diff_share *sh, uint64_t *cnt[2])
{
	struct diff *d = &b->d->pub;
	bool seconds = d->test == DIFF_TEST_SECONDS;
	size_t pos[2] = {0, 0};

	for (int s = 0; s < 2; s++)
		qsort(b->side[s].m[m].cells, b->side[s].m[m].n, sizeof(struct cell), cmp_cell);
	for (uint32_t k = 0; k < nkeys; k++) {
		struct diff_share *x = &sh[k];
		struct stats_result sr = {.p = 1};
		struct moments mo[2];

		for (int s = 0; s < 2; s++)
			mo[s] =
			    key_moments(&u[s], &b->side[s].m[m], &pos[s], k, seconds, &cnt[s][k]);
		*x = (struct diff_share){.p = 1, .p_adj = 1};
		x->base_pct =
		    d->side[0].samples ? 100.0 * (double)cnt[0][k] / (double)d->side[0].samples : 0;
		x->new_pct =
		    d->side[1].samples ? 100.0 * (double)cnt[1][k] / (double)d->side[1].samples : 0;
		x->delta = x->new_pct - x->base_pct;
		x->tested = d->test != DIFF_TEST_NONE &&
			    (x->base_pct + x->new_pct) / 2 >= DIFF_MIN_TESTED_PCT &&
			    !(x->base_pct >= 100 - DIFF_MIN_TESTED_PCT &&
			      x->new_pct >= 100 - DIFF_MIN_TESTED_PCT);
		if (!x->tested)
			continue;
		if (d->test == DIFF_TEST_SAMPLES)
			stats_two_prop(cnt[0][k], d->side[0].samples, cnt[1][k], d->side[1].samples,
				       &sr);
		else if (stats_welch_moments(mo[0].mean, mo[0].var, mo[0].n, mo[1].mean, mo[1].var,
					     mo[1].n, &sr))
			sr.p = 1;
		x->p = sr.p;
		x->test = sr;
		x->test.se *= 100; /* shares → points */
		x->test_delta =
		    d->test == DIFF_TEST_SAMPLES ? x->delta : 100 * (mo[1].mean - mo[0].mean);
	}
}

/* Holm over the tested shares of a family (n pointers); stars. */
static int family_holm(struct diff_share **fam, size_t n)
{
	double *p = calloc(n + 1, sizeof(*p)), *adj = calloc(n + 1, sizeof(*adj));
	size_t *scratch = calloc(n + 1, sizeof(*scratch));
	int rc = -ENOMEM;

	if (p && adj && scratch) {
		for (size_t i = 0; i < n; i++)
			p[i] = fam[i]->p;
		stats_holm(p, adj, scratch, n);
		for (size_t i = 0; i < n; i++) {
			fam[i]->p_adj = adj[i];
			fam[i]->sig = adj[i] < DIFF_ALPHA;
		}
		rc = 0;
	}
	free(p);
	free(adj);
	free(scratch);
	return rc;
}

/* The rows' own and total shares: one family. A total whose counts are
 * own's on both sides (a function that calls nothing sampled) is own's
 * test, not a second one. */
static int rows_test(struct builder *b, const struct units u[2])
{
	struct diff *d = &b->d->pub;
	size_t n = d->nrows, nf = 0;
	struct diff_share *own = calloc(n + 1, sizeof(*own)), *tot = calloc(n + 1, sizeof(*tot));
	struct diff_share **fam = calloc(2 * n + 1, sizeof(*fam));
	uint64_t *oc[2] = {calloc(n + 1, 8), calloc(n + 1, 8)};
	uint64_t *tc[2] = {calloc(n + 1, 8), calloc(n + 1, 8)};
	int rc = -ENOMEM;

	if (!own || !tot || !fam || !oc[0] || !oc[1] || !tc[0] || !tc[1])
		goto out;
	measure_test(b, u, M_OWN, n, own, oc);
	measure_test(b, u, M_TOTAL, n, tot, tc);
	for (size_t r = 0; r < n; r++) {
		bool same = oc[0][r] == tc[0][r] && oc[1][r] == tc[1][r];
		if (own[r].tested)
			fam[nf++] = &own[r];
		if (tot[r].tested && !same)
			fam[nf++] = &tot[r];
	}
	d->ntested = nf;
	if ((rc = family_holm(fam, nf)))
		goto out;
	for (size_t r = 0; r < n; r++) {
		struct diff_row *row = &d->rows[r];
		row->own = own[r];
		/* the same counts: own's shares and test (own is in the family) */
		row->total = oc[0][r] == tc[0][r] && oc[1][r] == tc[1][r] ? own[r] : tot[r];
		row->gone = tc[1][r] == 0;
		row->added = tc[0][r] == 0;
	}
out:
	free(own);
	free(tot);
	free(fam);
	for (int s = 0; s < 2; s++) {
		free(oc[s]);
		free(tc[s]);
	}
	return rc;
}

/* The paths' total shares: a family of their own (the icicle's colours). */
static int paths_test(struct builder *b, const struct units u[2])
{
	struct diff *d = &b->d->pub;
	size_t n = d->npaths, nf = 0;
	struct diff_share *sh = calloc(n + 1, sizeof(*sh)), **fam = calloc(n + 1, sizeof(*fam));
	uint64_t *c[2] = {calloc(n + 1, 8), calloc(n + 1, 8)};
	int rc = -ENOMEM;

	if (sh && fam && c[0] && c[1]) {
		measure_test(b, u, M_PATH, n, sh, c);
		for (size_t i = 0; i < n; i++)
			if (sh[i].tested)
				fam[nf++] = &sh[i];
		if (!(rc = family_holm(fam, nf)))
			for (size_t i = 0; i < n; i++)
				d->paths[i].total = sh[i];
	}
	ARRAY_FREE_ALL(sh, fam, c[0], c[1]);
	return rc;
}

/* Units, the test, p-values and stars of rows and paths. */
static int run_tests(struct builder *b)
{
	struct diff *d = &b->d->pub;
	struct units u[2] = {0};
	bool seconds;
	int rc = -ENOMEM;

	d->test = pick_test(d, b);
	seconds = d->test == DIFF_TEST_SECONDS;
	for (int s = 0; s < 2; s++) {
		if (units_build(&u[s], &b->side[s].m[M_OWN], seconds))
			goto out;
		d->side[s].units = d->test == DIFF_TEST_SAMPLES ? 0 : u[s].nkept;
	}
	if (seconds && (u[0].nkept < STATS_MIN_UNITS || u[1].nkept < STATS_MIN_UNITS)) {
		snprintf(d->why_none, sizeof(d->why_none),
			 "too few seconds to test (base %zu, new %zu; %d a side needed): no "
			 "stars",
			 u[0].nkept, u[1].nkept, STATS_MIN_UNITS);
		d->test = DIFF_TEST_NONE;
	}
	if (!(rc = rows_test(b, u)))
		rc = paths_test(b, u);
out:
	units_free(&u[0]);
	units_free(&u[1]);
	return rc;
}

const struct diff_share *diff_row_change(const struct diff_row *r)
{
	const struct diff_share *o = &r->own, *t = &r->total;

	if (o->sig != t->sig)
		return o->sig ? o : t;
	return fabs(t->delta) > fabs(o->delta) ? t : o;
}

/* A change worth a row at the top: starred and at least half a point of
 * the profile. */
static bool material(const struct diff_row *r)
{
	const struct diff_share *c = diff_row_change(r);

	return c->sig && fabs(c->delta) >= DIFF_MIN_TESTED_PCT;
}

/* Material changes first, by the larger of own and total change; then
 * every other row by its larger own share: ordered by change alone, a 60%
 * function that did not move sank below 0.1% kernel rows that moved by 0.1
 * (issue 24). */
static int cmp_row(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	const struct diff_share *ca = diff_row_change(a), *cb = diff_row_change(b);

	if (material(a) != material(b))
		return material(a) ? -1 : 1;
	if (material(a) && fabs(ca->delta) != fabs(cb->delta))
		return fabs(ca->delta) > fabs(cb->delta) ? -1 : 1;
	double sa = fmax(a->own.base_pct, a->own.new_pct),
	       sb = fmax(b->own.base_pct, b->own.new_pct);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->total.new_pct != b->total.new_pct)
		return a->total.new_pct > b->total.new_pct ? -1 : 1;
	if (a->kernel != b->kernel)
		return a->kernel ? 1 : -1;
	return strcmp(a->func, b->func);
}

static void mean_summaries(struct diff *d)
{
	for (int s = 0; s < 2; s++) {
		struct diff_side *ds = &d->side[s];
		double n = (double)ds->nsummaries;
		if (!ds->nsummaries)
			continue;
		ds->summary.wall_s /= n;
		ds->summary.cpu_s /= n;
		ds->summary.avg_cpu /= n;
		ds->summary.peak_cpu /= n;
		ds->summary.peak_rss = (uint64_t)((double)ds->summary.peak_rss / n);
	}
}

int diff_compare(const struct diff_snap *base, const struct diff_snap *new_,
		 const struct diff_opts *o, struct diff **out)
{
	struct builder b = {.o = o};
	int rc;

	*out = NULL;
	if (!(b.d = calloc(1, sizeof(*b.d))))
		return -ENOMEM;
	if (!(rc = side_add(&b, 0, base)) && !(rc = side_add(&b, 1, new_)) &&
	    !(rc = run_tests(&b))) {
		mean_summaries(&b.d->pub);
		qsort(b.d->pub.rows, b.d->pub.nrows, sizeof(struct diff_row), cmp_row);
	}
	for (int s = 0; s < 2; s++)
		for (int m = 0; m < M_N; m++)
			acc_free(&b.side[s].m[m]);
	free(b.stamp);
	strpool_free(&b.keys);
	if (rc) {
		diff_free(&b.d->pub);
		return rc;
	}
	*out = &b.d->pub;
	return 0;
}

void diff_free(struct diff *d)
{
	struct diff_impl *di = (struct diff_impl *)d;

	if (!d)
		return;
	free(d->rows);
	free(d->paths);
	hashidx_free(&di->pix);
	strpool_free(&di->names);
	free(di);
}
