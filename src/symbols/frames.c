/*
 * frames — the frames table of the symbolizer stage (see frames.h).
 *
 * Owns a compact array of entries (struct frame plus what the table keeps
 * privately) and one hash index over it (hashidx: id → entry). Three kinds of key share the
 * index, told apart by a kind byte in the key:
 *
 *  - live frames: (pid, pc, kernel, inline level); wait pseudo frames are
 *    live frames of pid -1 with pc = the wait kind, so they never collide
 *    with real ones;
 *  - named frames (a saved profile): (kernel, jit, module, function, file,
 *    line) by content; the strings are copied into the table's pool first,
 *    so pooled pointers identify them.
 *
 * Inline frames (frames_user_chain): a pc in inlined code is one frame per
 * inlined level plus the frame of the function it lies in, all with the
 * same (pid, pc) and told apart by the level (1 = innermost; 0 is the real
 * function). The chain is asked of sym once, when the level-0 frame is
 * first named, and its length kept on that entry; a later sample of the
 * pc costs one index probe per level. Inline frames carry their file:line
 * from the start (sym computed it with the chain). A level reclaimed while
 * its pc's level 0 lives is named again from sym's cache.
 *
 * Naming: a user pc is named when interned (function, module, offset: one
 * binary search in the module's table, sym_resolve_user without lines). To
 * look its line up later, even after the process's space reloaded or
 * dropped the mapping, the entry keeps a reference on the struct module
 * and the ELF address (pc - bias); frames_line then asks
 * sym_resolve_module and drops the module reference, which is no longer
 * needed. Perf-map (JIT), unmapped, kernel and wait frames have no line:
 * frames_line just marks them looked up.
 *
 * Reclaiming: an entry whose references fall to zero (frames_unref) leaves
 * the index, drops its module reference and goes on a free list; its id is
 * handed out again by the next intern. Entries never referenced are kept
 * (a frame is interned before the window refs it). Named frames' strings
 * stay in the pool until frames_free (bounded by the distinct names).
 * Every string of a live user frame (function, module, file, inline
 * levels, origin path and build-id) is a counted string in names, dropped
 * with the frame: sym keeps a name only until its next call, and a target
 * chooses them (a JIT renames its code every second, a loop of dlopen
 * brings new libraries with new functions), so names follow the window's
 * content too.
 *
 * Contract: frames_new → (intern, get, line, ref, unref)* → frames_free,
 * after the window that holds references and before sym_free (sym owns the
 * strings of kernel frames).
 */
#include "stacktop/symbols/frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "stacktop/lib/hashidx.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/proc/waits.h"

#define NO_ID UINT32_MAX

enum fkind { FK_LIVE = 1, FK_NAMED = 2 };

struct entry {
	struct frame f;
	uint64_t hash;
	uint32_t refs;
	uint32_t next_free; /* free list link, NO_ID at its end */
	uint8_t kind;	    /* enum fkind; 0: free */
	uint8_t inl;	    /* inline level of a live user frame, 0: the real function */
	uint8_t ninl;	    /* level 0: how many inline levels its pc has ... */
	bool inl_done;	    /* ... once asked */
	struct module *mod; /* user frame with a line to look up, referenced */
	uint64_t elf_addr;
	unsigned named_gen; /* user frame left unnamed: the space generation tried */
	bool own;	    /* f's strings are references in frames->names (user frames) */
	bool jit_unnamed;   /* anonymous executable code (a JIT's) left without a name */
};

struct frames {
	struct sym *sy;
	struct entry *e;
	size_t n, cap; /* n: one past the highest id handed out */
	struct hashidx ix;
	size_t nused; /* ids in the index (live) */
	uint32_t free_head;
	uint64_t named_seq;   /* synthetic pcs of named frames */
	struct strpool pool;  /* named frames' strings */
	struct strpool names; /* counted: user frames' strings, one reference per use */
	unsigned names_gen;   /* sym_names_gen when frames were last re-named */
};

static uint64_t live_hash(int pid, uint64_t pc, bool kernel, uint8_t inl)
{
	uint64_t k = ((uint64_t)inl << 40) ^ ((uint64_t)(uint32_t)pid << 2);

	return hashidx_mix64(pc ^ hashidx_mix64(k | (uint64_t)kernel << 1 | 1));
}

static uint64_t ptr_mix(uint64_t h, const void *p)
{
	return hashidx_mix64(h ^ (uint64_t)(uintptr_t)p);
}

static uint64_t named_hash(const struct sym_info *si)
{
	uint64_t h = hashidx_mix64(0x6e616d6564ull ^ (uint64_t)si->kernel << 1 ^
				   (uint64_t)si->jit << 2 ^ (uint64_t)si->inlined << 3);

	h = ptr_mix(h, si->module);
	h = ptr_mix(h, si->func);
	h = ptr_mix(h, si->file);
	return hashidx_mix64(h ^ (uint64_t)(uint32_t)si->line);
}

int frames_new(struct sym *sy, struct frames **out)
{
	struct frames *fr = calloc(1, sizeof(*fr));

	if (!fr)
		return -ENOMEM;
	fr->sy = sy;
	fr->free_head = NO_ID;
	*out = fr;
	return 0;
}

void frames_free(struct frames *fr)
{
	if (!fr)
		return;
	for (size_t i = 0; i < fr->n; i++)
		space_module_put(fr->e[i].mod);
	free(fr->e);
	hashidx_free(&fr->ix);
	strpool_free(&fr->pool);
	strpool_free(&fr->names);
	free(fr);
}

/* ---- the index ---- */

static bool entry_hash_of(const void *ctx, uint32_t id, uint64_t *h)
{
	const struct entry *e = &((const struct frames *)ctx)->e[id];

	*h = e->hash;
	return e->kind != 0; /* free entries are not indexed */
}

struct live_key {
	uint64_t hash, pc;
	int pid;
	bool kernel;
	uint8_t inl;
};

static bool live_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct entry *e = &((const struct frames *)ctx)->e[id];
	const struct live_key *k = key;

	return e->hash == k->hash && e->kind == FK_LIVE && e->f.pc == k->pc && e->f.pid == k->pid &&
	       e->f.kernel == k->kernel && e->inl == k->inl;
}

struct named_key {
	uint64_t hash;
	const struct sym_info *si;
	struct frame_origin o; /* pooled */
};

static bool named_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct entry *e = &((const struct frames *)ctx)->e[id];
	const struct sym_info *a = &e->f.sym, *si = ((const struct named_key *)key)->si;

	return e->hash == ((const struct named_key *)key)->hash && e->kind == FK_NAMED &&
	       a->func == si->func && a->module == si->module && a->file == si->file &&
	       a->line == si->line && a->kernel == si->kernel && a->jit == si->jit &&
	       a->inlined == si->inlined &&
	       e->f.origin.path == ((const struct named_key *)key)->o.path &&
	       e->f.origin.build_id == ((const struct named_key *)key)->o.build_id &&
	       e->f.origin.elf_addr == ((const struct named_key *)key)->o.elf_addr;
}

/* A new entry with hash h, indexed. Returns its id or -ENOMEM. */
static int64_t entry_add(struct frames *fr, uint64_t h, uint8_t kind)
{
	uint32_t id;

	if (hashidx_reserve(&fr->ix, fr->nused, fr->n, 64, entry_hash_of, fr))
		return -ENOMEM;
	if (fr->free_head != NO_ID) {
		id = fr->free_head;
		fr->free_head = fr->e[id].next_free;
	} else {
		if (fr->n >= UINT32_MAX - 1)
			return -ENOMEM;
		if (array_grow((void **)&fr->e, &fr->cap, fr->n + 1, sizeof(*fr->e)))
			return -ENOMEM;
		id = (uint32_t)fr->n++;
	}
	fr->e[id] = (struct entry){.hash = h, .kind = kind, .next_free = NO_ID};
	hashidx_put(&fr->ix, h, id);
	fr->nused++;
	return id;
}

/* The live frame's id at inline level inl, or -ENOMEM (*created set when
 * made new). */
static int64_t live_intern_at(struct frames *fr, int pid, uint64_t pc, bool kernel, uint8_t inl,
			      bool *created)
{
	struct live_key k = {.hash = live_hash(pid, pc, kernel, inl),
			     .pc = pc,
			     .pid = pid,
			     .kernel = kernel,
			     .inl = inl};
	int64_t id;

	*created = false;
	if ((id = hashidx_find(&fr->ix, k.hash, live_eq, fr, &k, NULL)) >= 0)
		return id;
	if ((id = entry_add(fr, k.hash, FK_LIVE)) < 0)
		return id;
	fr->e[id].f = (struct frame){.pid = pid, .pc = pc, .kernel = kernel};
	fr->e[id].inl = inl;
	*created = true;
	return id;
}

static int64_t live_intern(struct frames *fr, int pid, uint64_t pc, bool kernel, bool *created)
{
	return live_intern_at(fr, pid, pc, kernel, 0, created);
}

/* ---- interning ---- */

/* A counted copy of s in names (NULL stays NULL). */
static const char *own_str(struct frames *fr, const char *s)
{
	return s ? strpool_ref(&fr->names, s) : NULL;
}

/* si's names (from sym, valid until its next call) replaced by counted
 * copies; on ENOMEM si is left as it was and false. */
static bool own_strs(struct frames *fr, struct sym_info *si)
{
	const char *fn = own_str(fr, si->func), *mod = own_str(fr, si->module),
		   *file = own_str(fr, si->file);

	if ((si->func && !fn) || (si->module && !mod) || (si->file && !file)) {
		strpool_unref(&fr->names, fn);
		strpool_unref(&fr->names, mod);
		strpool_unref(&fr->names, file);
		return false;
	}
	si->func = fn;
	si->module = mod;
	si->file = file;
	return true;
}

/* The counted strings of f dropped (its entry is reclaimed). */
static void drop_strs(struct frames *fr, struct frame *f)
{
	strpool_unref(&fr->names, f->sym.func);
	strpool_unref(&fr->names, f->sym.module);
	strpool_unref(&fr->names, f->sym.file);
	strpool_unref(&fr->names, f->origin.path);
	strpool_unref(&fr->names, f->origin.build_id);
}

/* The frame's origin (path, build-id as hex: counted in names) for
 * annotate and the pprof export. Left empty on ENOMEM: only annotating it
 * is lost. */
static void set_origin(struct frames *fr, struct frame *f, const struct module *mod,
		       uint64_t elf_addr)
{
	char hex[2 * sizeof(mod->build_id) + 1];

	for (size_t i = 0; i < mod->build_id_len && i < sizeof(mod->build_id); i++)
		snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
	hex[2 * (mod->build_id_len < sizeof(mod->build_id) ? mod->build_id_len
							   : sizeof(mod->build_id))] = '\0';
	f->origin.path = own_str(fr, mod->path);
	f->origin.build_id = hex[0] ? own_str(fr, hex) : NULL;
	f->origin.elf_addr = elf_addr;
}

int64_t frames_user(struct frames *fr, struct space *sp, uint64_t pc)
{
	const struct mapping *m;
	struct sym_info si;
	struct entry *e;
	bool created;
	int64_t id = live_intern(fr, sp->pid, pc, false, &created);

	if (id < 0 || !fr->sy)
		return id;
	e = &fr->e[id];
	/* A pc in no known mapping is code mapped since the maps were read
	 * (a launched command's libraries, dlopen): try again once the maps
	 * are reloaded, instead of calling it [unknown] for good. */
	if (e->f.has_sym || (!created && e->named_gen == sp->generation))
		return id;
	e->named_gen = sp->generation;
	if (sym_resolve_user(fr->sy, sp, pc, false, &si) != 0)
		return id; /* unnamed: the views show the pc */
	m = space_find(sp, pc);
	if (!m && !si.jit)
		return id;
	/* sym keeps names only until its next call, and a target chooses
	 * them: the frame holds counted copies, freed with the last frame
	 * that uses them, so names follow the window's content. */
	if (!si.jit) { /* frames_line reads it when shown; a jitdump gave it now */
		si.file = NULL;
		si.line = 0;
	}
	if (!own_strs(fr, &si))
		return id;
	e->own = true;
	e->f.sym = si;
	e->f.has_sym = true;
	e->jit_unnamed = m && !m->path && (m->prot & PROT_EXEC) && !si.func && !si.jit;
	/* What frames_line needs, kept past any reload of the space. */
	if (m && m->mod && m->mod->elf && !si.jit) {
		e->mod = m->mod;
		space_module_get(e->mod);
		e->elf_addr = pc - m->bias;
		set_origin(fr, &e->f, m->mod, e->elf_addr);
	}
	return id;
}

/* The inline chain of a named user pc from sym (innermost first). */
static int chain_of(struct frames *fr, struct space *sp, uint64_t pc, struct sym_info *chain)
{
	int n = 0;

	if (sym_inline_user(fr->sy, sp, pc, chain, SYM_INLINE_MAX, &n) != 0)
		return 0;
	return n;
}

int frames_user_chain(struct frames *fr, struct space *sp, uint64_t pc, uint32_t *ids, int max)
{
	struct sym_info chain[SYM_INLINE_MAX];
	int64_t id = frames_user(fr, sp, pc);
	int nchain = -1, n = 0, k, ninl;
	struct entry *e;

	if (id < 0 || max <= 0)
		return id < 0 ? (int)id : 0;
	e = &fr->e[id];
	if (!e->inl_done && fr->sy && e->f.has_sym && !e->f.sym.jit && !e->f.sym.kernel) {
		nchain = chain_of(fr, sp, pc, chain);
		e->ninl = (uint8_t)nchain;
		e->inl_done = true;
	}
	ninl = e->ninl;
	for (k = 0; k < ninl && n < max - 1; k++) {
		bool created;
		int64_t iid = live_intern_at(fr, sp->pid, pc, false, (uint8_t)(k + 1), &created);

		if (iid < 0)
			return (int)iid;
		if (created) {
			struct frame *f = &fr->e[iid].f;

			if (nchain < 0)
				nchain = chain_of(fr, sp, pc, chain);
			if (k < nchain && own_strs(fr, &chain[k])) {
				fr->e[iid].own = true;
				f->sym = chain[k];
				f->has_sym = true;
			}
			f->has_line = true; /* the chain came with its lines */
		}
		ids[n++] = (uint32_t)iid;
	}
	ids[n++] = (uint32_t)id;
	return n;
}

int64_t frames_kernel(struct frames *fr, int pid, uint64_t pc)
{
	struct sym_info si;
	bool created;
	int64_t id = live_intern(fr, pid, pc, true, &created);

	if (id < 0 || !created || !fr->sy)
		return id;
	if (sym_resolve_kernel(fr->sy, pc, &si) == 0) {
		fr->e[id].f.sym = si;
		fr->e[id].f.has_sym = true;
	}
	return id;
}

int64_t frames_wait(struct frames *fr, enum sample_wait kind)
{
	struct frame *f;
	bool created;
	int64_t id;

	if (kind <= SAMPLE_WAIT_NONE || kind >= SAMPLE_WAIT_COUNT)
		return -EINVAL;
	id = live_intern(fr, -1, (uint64_t)kind, false, &created);
	if (id < 0 || !created)
		return id;
	f = &fr->e[id].f;
	f->sym.func = waits_frame_name(kind);
	f->sym.module = "[wait]";
	f->has_sym = true;
	f->wait = (uint8_t)kind;
	return id;
}

int64_t frames_preset(struct frames *fr, int pid, uint64_t pc, bool kernel,
		      const struct sym_info *si, bool with_line)
{
	struct frame *f;
	bool created;
	int64_t id = live_intern(fr, pid, pc, kernel, &created);

	if (id < 0 || !created || !si)
		return id;
	f = &fr->e[id].f;
	f->sym = *si;
	f->has_sym = true;
	f->has_line = with_line;
	if (!with_line) {
		f->sym.file = NULL;
		f->sym.line = 0;
	}
	return id;
}

/* The pool's copy of s (NULL stays NULL); false on ENOMEM. */
static bool pool_copy(struct strpool *p, const char *s, const char **out)
{
	*out = s ? strpool_cstr(p, s) : NULL;
	return !s || *out;
}

int64_t frames_named(struct frames *fr, const struct sym_info *si)
{
	return frames_named_at(fr, si, NULL);
}

int64_t frames_named_at(struct frames *fr, const struct sym_info *si, const struct frame_origin *o)
{
	struct sym_info k = *si;
	struct frame *f;
	struct named_key nk = {.si = &k};
	int64_t id;

	if (!pool_copy(&fr->pool, si->func, &k.func) ||
	    !pool_copy(&fr->pool, si->module, &k.module) ||
	    !pool_copy(&fr->pool, si->file, &k.file) ||
	    (o && (!pool_copy(&fr->pool, o->path, &nk.o.path) ||
		   !pool_copy(&fr->pool, o->build_id, &nk.o.build_id))))
		return -ENOMEM;
	if (o)
		nk.o.elf_addr = o->elf_addr;
	if (k.line < 0)
		k.line = 0;
	nk.hash = hashidx_mix64(named_hash(&k) ^ nk.o.elf_addr ^ (uint64_t)(uintptr_t)nk.o.path);
	if ((id = hashidx_find(&fr->ix, nk.hash, named_eq, fr, &nk, NULL)) >= 0)
		return id;
	if ((id = entry_add(fr, nk.hash, FK_NAMED)) < 0)
		return id;
	f = &fr->e[id].f;
	/* The identity of the function is its pooled name; offsets are
	 * unknown. pc only has to be unique (pprof location addresses). */
	k.offset = 0;
	k.func_start = (uint64_t)(uintptr_t)k.func;
	*f = (struct frame){
	    .pid = 0,
	    .pc = ++fr->named_seq,
	    .kernel = k.kernel,
	    .has_sym = true,
	    .has_line = true, /* all there is to know came with it */
	    .sym = k,
	    .origin = nk.o,
	};
	return id;
}

int64_t frames_script(struct frames *fr, enum frame_lang lang, const struct sym_info *si)
{
	struct sym_info k = *si;
	struct named_key nk = {.si = &k};
	int64_t id;

	if (!own_strs(fr, &k))
		return -ENOMEM;
	if (k.line < 0)
		k.line = 0;
	/* Its own hash space: a saved profile's frame of the same names
	 * (pooled, not counted) is another frame. */
	nk.hash = hashidx_mix64(named_hash(&k) ^ 0x736372697074ull ^ lang);
	id = hashidx_find(&fr->ix, nk.hash, named_eq, fr, &nk, NULL);
	if (id < 0)
		id = entry_add(fr, nk.hash, FK_NAMED);
	if (id < 0 || fr->e[id].own) {
		/* found (it holds its own references) or out of memory */
		strpool_unref(&fr->names, k.func);
		strpool_unref(&fr->names, k.module);
		strpool_unref(&fr->names, k.file);
		return id;
	}
	k.offset = 0;
	k.func_start = (uint64_t)(uintptr_t)k.func;
	fr->e[id].own = true;
	fr->e[id].f = (struct frame){
	    .pc = ++fr->named_seq,
	    .has_sym = true,
	    .has_line = true,
	    .lang = (uint8_t)lang,
	    .sym = k,
	};
	return id;
}

int64_t frames_process(struct frames *fr, int pid, const char *comm)
{
	char name[96];
	int64_t id;

	/* A kernel comm is 15 bytes at most; the cap is for any other caller
	 * (views sanitize what a byte cut may leave). */
	snprintf(name, sizeof(name), "%.64s (%d)", comm && *comm ? comm : "?", pid);
	id = frames_script(fr, FRAME_LANG_PROCESS,
			   &(struct sym_info){.func = name, .module = "[process]"});
	if (id >= 0)
		fr->e[id].f.pid = pid;
	return id;
}

/* ---- queries ---- */

const struct frame *frames_get(const struct frames *fr, uint32_t id)
{
	return id < fr->n && fr->e[id].kind ? &fr->e[id].f : NULL;
}

size_t frames_span(const struct frames *fr)
{
	return fr->n;
}

size_t frames_live(const struct frames *fr)
{
	return fr->nused;
}

size_t frames_names(const struct frames *fr)
{
	return strpool_live(&fr->names);
}

const struct frame *frames_line(struct frames *fr, uint32_t id)
{
	struct entry *e;
	struct sym_info si;
	char root[64];

	if (id >= fr->n || !fr->e[id].kind)
		return NULL;
	e = &fr->e[id];
	if (e->f.has_line)
		return &e->f;
	if (e->mod && fr->sy) {
		snprintf(root, sizeof(root), "/proc/%d/root", e->f.pid);
		if (sym_resolve_module(fr->sy, e->mod, e->f.pid > 0 ? root : "", e->elf_addr, true,
				       &si) == 0 &&
		    (!si.file || (si.file = own_str(fr, si.file)))) {
			strpool_unref(&fr->names, e->f.sym.file);
			e->f.sym.file = si.file;
			e->f.sym.line = si.line;
		}
	}
	/* Looked up once, hit or miss: the module is not needed any more,
	 * unless the frame has no name yet (a debug file may still arrive:
	 * frames_renamed). */
	if ((e->f.sym.func == NULL || e->f.sym.by_range) && fr->sy && sym_names_may_change(fr->sy))
		goto out;
	space_module_put(e->mod);
	e->mod = NULL;
out:
	e->f.has_line = true;
	return &e->f;
}

/* A module's names improved (a debug file fetched from debuginfod): the
 * live frames still without a function name are named again; file:line is
 * looked up again on the next frames_line. Only frames that kept their
 * module (unnamed ones do) can be. */
int frames_renamed(struct frames *fr)
{
	int k = 0;
	char root[64];

	if (!fr->sy || sym_names_gen(fr->sy) == fr->names_gen)
		return 0;
	fr->names_gen = sym_names_gen(fr->sy);
	for (size_t id = 0; id < fr->n; id++) {
		struct entry *e = &fr->e[id];
		struct sym_info si;

		if (e->kind != FK_LIVE || !e->mod || !e->f.has_sym ||
		    (e->f.sym.func && !e->f.sym.by_range))
			continue;
		snprintf(root, sizeof(root), "/proc/%d/root", e->f.pid);
		if (sym_resolve_module(fr->sy, e->mod, e->f.pid > 0 ? root : "", e->elf_addr, false,
				       &si) != 0 ||
		    !si.func || si.by_range || !(si.func = own_str(fr, si.func)))
			continue;
		strpool_unref(&fr->names, e->f.sym.func);
		strpool_unref(&fr->names, e->f.sym.file);
		e->f.sym.func = si.func;
		e->f.sym.by_range = false;
		e->f.sym.offset = si.offset;
		e->f.sym.func_start = si.func_start + (e->f.pc - e->elf_addr); /* runtime */
		e->f.sym.file = NULL;
		e->f.sym.line = 0;
		e->f.has_line = false;
		k++;
	}
	return k;
}

bool frames_jit_unnamed(const struct frames *fr, uint32_t id)
{
	return id < fr->n && fr->e[id].kind == FK_LIVE && fr->e[id].jit_unnamed;
}

int frames_rename_jit(struct frames *fr, int pid, frames_jit_lookup_fn *lookup, void *ctx)
{
	int k = 0;

	for (size_t id = 0; id < fr->n; id++) {
		struct entry *e = &fr->e[id];
		struct sym_info si;

		if (e->kind != FK_LIVE || !e->jit_unnamed || e->f.pid != pid ||
		    lookup(ctx, e->f.pc, &si) != 0 || !si.func)
			continue;
		/* the names are the lookup's until its next call: counted copies */
		si.file = NULL;
		si.line = 0;
		if (!own_strs(fr, &si))
			continue;
		drop_strs(fr, &e->f);
		e->f.origin = (struct frame_origin){0};
		e->f.sym = si;
		e->f.has_line = true; /* JIT code has no lines to look up */
		e->jit_unnamed = false;
		k++;
	}
	return k;
}

/* ---- references ---- */

void frames_ref(struct frames *fr, uint32_t id)
{
	if (id < fr->n && fr->e[id].kind && fr->e[id].refs < UINT32_MAX)
		fr->e[id].refs++;
}

/* Take entry id out of the index and put it on the free list. */
static void entry_reclaim(struct frames *fr, uint32_t id)
{
	struct entry *e = &fr->e[id];
	size_t j = hashidx_slot_of(&fr->ix, e->hash, id);

	if (j != SIZE_MAX)
		hashidx_unslot(&fr->ix, j, entry_hash_of, fr);
	space_module_put(e->mod);
	if (e->own)
		drop_strs(fr, &e->f);
	*e = (struct entry){.next_free = fr->free_head};
	fr->free_head = id;
	fr->nused--;
}

void frames_unref(struct frames *fr, uint32_t id)
{
	if (id >= fr->n || !fr->e[id].kind || !fr->e[id].refs)
		return;
	if (--fr->e[id].refs == 0)
		entry_reclaim(fr, id);
}
