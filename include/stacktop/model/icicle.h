/*
 * icicle — the merged call tree behind the icicle view, and its layout.
 *
 * The window's trie keys nodes by frame id, and one function has as many
 * frame ids as sampled pcs. icicle_build merges them: children are keyed by
 * function (kernel?, module, function name; "module+0xoff" when the
 * function is unknown, "0xpc" without a symbol), so a node stands for one
 * call path of functions. Node 0 is the root "all". With per_thread_roots
 * the root's children are one node per thread, named by the query's
 * thread_label ("4502:4502 nginx"), or "tid N" without one. With inverted the
 * tree is bottom-up: the root's children are the leaf functions and each
 * node's children are its callers.
 *
 * Counts: total = samples whose stack runs through this node's path; self =
 * samples that end here (top-down), or, bottom-up, the leaf function's
 * samples on the first level and 0 below (callers have no self there).
 * Siblings are ordered heaviest first ("left heavy", as speedscope and
 * py-spy do: the hot path stays at the left edge while the profile is
 * live), ties by name so equal siblings keep their places between builds.
 *
 * icicle_layout is a pure function of (tree, zoom node, width, rows): each
 * node gets the columns [x0, x1) of its row in proportion to its total.
 * Children are placed by cumulative rounding of their running sum against
 * the parent's columns, so they never overflow the parent, and when the
 * children hold all of the parent's samples the last child ends exactly on
 * the parent's last column. A child with samples whose share rounds to
 * nothing still gets one column (a thin bar, still selectable) while the
 * parent has room: first from the parent's own free columns (its self
 * time), then from the widest sibling as long as it gives up at most 1/32
 * of its width (thin bars must not make what is hot look smaller), then
 * from the lightest sibling that has a single column. So a box is never
 * more than 1 + 1/32 of its exact width off, and with more children than
 * columns the heaviest ones are the ones shown.
 *
 * Ownership: icicle_build* allocate the tree, icicle_free frees it (names
 * are copied into the tree, so it outlives the window). Layout boxes and
 * path keys are malloc'd, the caller frees them (icicle_path_free).
 */
#ifndef STACKTOP_ICICLE_H
#define STACKTOP_ICICLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct window;

#define ICICLE_ROOT 0u
#define ICICLE_NONE UINT32_MAX /* no node / no frame */

struct icicle_node {
	const char *name;   /* label: function, "module+0x1a2b", "0x7f..", "all", "tid 4250" */
	const char *module; /* module basename, or NULL */
	uint32_t frame;	    /* a window frame id of it (from its heaviest stack), or ICICLE_NONE */
	uint64_t self, total;
	uint32_t parent;		    /* ICICLE_NONE for the root */
	uint32_t first_child, next_sibling; /* ICICLE_NONE terminated, heaviest first */
	uint32_t depth;			    /* 0 for the root */
	bool kernel;
	int tid; /* per-thread roots: the thread under which this node is; else 0 */
	/* fold_recursion: the most direct recursive calls folded into this
	 * node on one stack ("depth" calling itself 12 times: 12, shown ×13) */
	uint32_t rec;
};

struct icicle {
	struct icicle_node *nodes;
	size_t n;
	bool inverted;
	bool per_thread;	  /* depth-1 nodes are threads */
	bool fold_recursion;	  /* a function calling itself is one node (rec) */
	struct icicle_priv *priv; /* string pool and lookup tables */
};

struct icicle_query {
	int tid; /* 0: all threads */
	/* Whole machine (stacks start with a process root frame,
	 * frames_process): only process pid's stacks, its root frame left
	 * out (its functions are the first row); 0: all, roots kept. */
	int pid;
	bool hide_kernel;      /* drop kernel frames (a kernel-only stack counts on the root) */
	bool inverted;	       /* bottom-up */
	bool per_thread_roots; /* one root child per thread */
	/* Direct recursion (f calling f calling f) folded into one node whose
	 * rec counts the calls folded: 13 rows of "depth" pushed the leaves
	 * off the screen. Only a function calling itself directly: f → g → f
	 * stays as it is. */
	bool fold_recursion;
	/* The name of a thread's root (text for people, made in the view
	 * layer, already escaped; unique per tid); NULL: "tid N". */
	void (*thread_label)(const void *ctx, int tid, char *buf, size_t size);
	const void *label_ctx;
};

/* A test stack: "main;a;b" (outermost first, ';' separated) with a count. */
struct icicle_stack {
	const char *frames;
	uint64_t count;
};

/* Build the merged tree from the window's live counts. 0 or -errno. */
int icicle_build(struct window *w, const struct icicle_query *q, struct icicle **out);
/* The same from literal stacks (names only, no modules): for tests. */
int icicle_build_from_paths(const struct icicle_stack *stacks, size_t n, bool inverted,
			    struct icicle **out);
/* The same with a query's inverted and fold_recursion (the rest unused). */
int icicle_build_paths(const struct icicle_stack *stacks, size_t n, const struct icicle_query *q,
		       struct icicle **out);
void icicle_free(struct icicle *t);

/* The merge key of a node / a window frame: "u|k" + module + '\x1f' +
 * name. Equal keys mean the same function. Returns the key's length. */
size_t icicle_node_key(const struct icicle *t, uint32_t node, char *buf, size_t size);
size_t icicle_frame_key(struct window *w, uint32_t frame, char *buf, size_t size);
/* The same from a frame itself (a copy kept past the window's life of its
 * id: the top view's rows). */
struct frame;
size_t icicle_key_of(const struct frame *f, char *buf, size_t size);
/* The name of a frame's box: the function ("f (inline)" for an inlined
 * level), "module+0xoff" when unknown, "0xpc" without a symbol; buf holds
 * it when it is not the frame's own string. The diff names its paths so. */
const char *icicle_frame_name(const struct frame *f, char *buf, size_t size);
/* The child of parent with this key, or ICICLE_NONE. */
uint32_t icicle_child_by_key(const struct icicle *t, uint32_t parent, const char *key);
/* True if anc is node or one of its ancestors. */
bool icicle_is_ancestor(const struct icicle *t, uint32_t anc, uint32_t node);

/* A call path as keys from below the root down to a node, so a selection
 * or zoom survives rebuilding the tree. */
struct icicle_path {
	char **keys;
	size_t n;
};

int icicle_path_of(const struct icicle *t, uint32_t node, struct icicle_path *p);
/* The deepest node along p; *matched (optional) gets how many keys were
 * found (p->n when the whole path still exists). */
uint32_t icicle_path_resolve(const struct icicle *t, const struct icicle_path *p, size_t *matched);
void icicle_path_free(struct icicle_path *p);
int icicle_path_copy(const struct icicle_path *src, struct icicle_path *dst);

struct icicle_box {
	uint32_t node;
	int row;    /* depth below the zoom node: the zoom node itself is row 0 */
	int x0, x1; /* columns [x0, x1) */
};

/* Lay out the subtree of zoom_node in width columns and rows 0..max_depth-1.
 * Boxes come row by row, left to right; *boxes is malloc'd (also when *n is
 * 0), the caller frees. A zoom node without samples gives no boxes. */
int icicle_layout(const struct icicle *t, uint32_t zoom_node, int width, int max_depth,
		  struct icicle_box **boxes, size_t *n);

#endif
