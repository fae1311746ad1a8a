/*
 * srcline — file:line and inline chains from DWARF, cached per address
 * (see srcline.h).
 */
#include <dwarf.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/pump.h"
#include "stacktop/lib/text.h"
#include "stacktop/symbols/srcline.h"
#include "stacktop/symbols/sym.h"

/* A range of a DWARF subprogram and its DIE, for inline chains; off 0:
 * a function DWARF has no subprogram for (SUB_NO_CU: nor a CU). */
struct srcline_sub {
	uint64_t start, end;
	Dwarf_Off off;
};

#define SUB_NO_CU ((Dwarf_Off)-1)

struct srcline {
	Dwarf *dw; /* owned; NULL: no DWARF */
	bool (*fn_range)(void *ctx, uint64_t addr, uint64_t *start, uint64_t *end);
	void *ctx;
	struct srcline_loc *locs; /* open addressing on addr, a power of two */
	size_t cap, used;
	struct srcline_sub *subs; /* DWARF subprogram ranges seen, sorted */
	size_t nsubs, subs_cap;
};

int srcline_new(Dwarf *dw,
		bool (*fn_range)(void *ctx, uint64_t addr, uint64_t *start, uint64_t *end),
		void *ctx, struct srcline **out)
{
	struct srcline *sl = calloc(1, sizeof(*sl));

	if (!sl) {
		if (dw)
			dwarf_end(dw);
		return -ENOMEM;
	}
	sl->dw = dw;
	sl->fn_range = fn_range;
	sl->ctx = ctx;
	*out = sl;
	return 0;
}

static void loc_clear(struct srcline_loc *l)
{
	free(l->file);
	for (unsigned k = 0; k < l->ninl; k++) {
		free(l->inl[k].func);
		free(l->inl[k].call_file);
	}
	free(l->inl);
}

void srcline_free(struct srcline *sl)
{
	if (!sl)
		return;
	for (size_t i = 0; i < sl->cap; i++)
		loc_clear(&sl->locs[i]);
	free(sl->locs);
	free(sl->subs);
	if (sl->dw)
		dwarf_end(sl->dw);
	free(sl);
}

bool srcline_has_dwarf(const struct srcline *sl)
{
	return sl->dw != NULL;
}

/* CU holding addr: aranges first, then a scan (GCC may omit aranges). */
static bool find_cu(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(dw, addr, cu))
		return true;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) > 0)
			return true;
		off = next;
		pump();
	}
	return false;
}

/* The name of a subprogram or inlined-subroutine DIE (through its
 * abstract origin), demangled; malloc'd, NULL on ENOMEM. */
static char *die_func_name(Dwarf_Die *die)
{
	char buf[SYM_DEMANGLE_MAX];
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n && dwarf_attr_integrate(die, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	return strdup(n ? symname_demangle(n, buf, sizeof(buf)) : "[inlined]");
}

/* Where an inlined subroutine was called from: DW_AT_call_file (an index
 * into the CU's file table) and DW_AT_call_line. */
static void die_call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles,
			  struct srcline_inl *out)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	const char *f;

	if (files && dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
	    w < nfiles && (f = dwarf_filesrc(files, w, NULL, NULL)))
		out->call_file = strdup(text_basename(f));
	if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0 && w <= INT_MAX)
		out->call_line = (int)w;
}

/* Is tag a DIE whose children may hold inlined code at a pc it covers? */
static bool scope_tag(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/* The inlined subroutines under fn holding addr, outermost first, into
 * out[0..max); returns how many. Only the subtree of one function is
 * walked, one level at a time (a loop, not recursion: the DWARF is the
 * target's, and may nest without end): the scopes that hold addr nest. */
static int walk_inlined(Dwarf_Die *fn, uint64_t addr, Dwarf_Die *out, int max)
{
	Dwarf_Die parent = *fn, c;
	int n = 0;

	while (dwarf_child(&parent, &c) == 0) {
		bool down = false;

		do {
			int tag = dwarf_tag(&c);

			if (!scope_tag(tag) || dwarf_haspc(&c, addr) <= 0)
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				if (n >= max)
					return n;
				out[n++] = c;
			}
			down = true;
			break;
		} while (dwarf_siblingof(&c, &c) == 0);
		if (!down)
			break;
		parent = c;
	}
	return n;
}

/* The subprogram DIE holding addr among parent's children (and in
 * namespaces and classes, where C++ puts some definitions, at most
 * SUB_NEST_MAX deep: the DWARF is the target's). */
#define SUB_NEST_MAX 8
static bool find_subprogram(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;

	if (depth > SUB_NEST_MAX || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_subprogram && dwarf_haspc(&c, addr) > 0) {
			*out = c;
			return true;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type) &&
		    find_subprogram(&c, addr, out, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* Remember [start, end) as part of the subprogram at off (kept sorted). */
static void subs_add(struct srcline *sl, uint64_t start, uint64_t end, Dwarf_Off off)
{
	size_t i = ARRAY_STARTS_AT_OR_BELOW(sl->subs, sl->nsubs, start);

	if (start >= end || (i && sl->subs[i - 1].start == start))
		return;
	if (array_grow((void **)&sl->subs, &sl->subs_cap, sl->nsubs + 1, sizeof(*sl->subs)))
		return; /* a cache: without it the next lookup walks again */
	memmove(&sl->subs[i + 1], &sl->subs[i], (sl->nsubs - i) * sizeof(*sl->subs));
	sl->subs[i] = (struct srcline_sub){start, end, off};
	sl->nsubs++;
}

/* The subprogram DIE holding addr: from the cache of subprogram ranges
 * seen, else found among the CU's children once (a walk over every
 * top-level DIE of the CU, as dwarf_getscopes would do for every pc). */
static bool subprogram_of(struct srcline *sl, Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out)
{
	size_t i = ARRAY_STARTS_AT_OR_BELOW(sl->subs, sl->nsubs, addr);
	Dwarf_Addr base, s, e;
	ptrdiff_t off = 0;
	uint64_t fs, fe;

	if (i && addr < sl->subs[i - 1].end)
		return sl->subs[i - 1].off && sl->subs[i - 1].off != SUB_NO_CU &&
		       dwarf_offdie(sl->dw, sl->subs[i - 1].off, out);
	if (!find_subprogram(cu, addr, out, 0)) {
		/* Code DWARF describes no function for (assembly): remember
		 * its symbol's range as such, or every pc would walk the CU. */
		if (sl->fn_range(sl->ctx, addr, &fs, &fe))
			subs_add(sl, fs, fe, 0);
		return false;
	}
	while ((off = dwarf_ranges(out, off, &base, &s, &e)) > 0)
		subs_add(sl, s, e, dwarf_dieoffset(out));
	return true;
}

/* The inlined subroutines holding addr, innermost first, with their call
 * sites. Walked down from the function holding addr (found once per
 * function): dwarf_getscopes would walk the whole CU for every pc, ~200 µs
 * in a libc CU. */
static void lookup_inline(struct srcline *sl, Dwarf_Die *cu, uint64_t addr, struct srcline_loc *out)
{
	Dwarf_Die sub, chain[SYM_INLINE_MAX];
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n, k;

	if (!subprogram_of(sl, cu, addr, &sub))
		return;
	n = walk_inlined(&sub, addr, chain, SYM_INLINE_MAX);
	if (n <= 0 || !(out->inl = calloc((size_t)n, sizeof(*out->inl))))
		return;
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (k = n - 1; k >= 0; k--) {
		struct srcline_inl *in = &out->inl[out->ninl];

		if (!(in->func = die_func_name(&chain[k])))
			break;
		die_call_site(&chain[k], files, nfiles, in);
		out->ninl++;
	}
}

/* Is addr in a function known to lie in no CU? */
static bool no_cu_at(const struct srcline *sl, uint64_t addr)
{
	size_t i = ARRAY_STARTS_AT_OR_BELOW(sl->subs, sl->nsubs, addr);

	return i && addr < sl->subs[i - 1].end && sl->subs[i - 1].off == SUB_NO_CU;
}

static void lookup_line(struct srcline *sl, uint64_t addr, struct srcline_loc *out)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	const char *src;
	int line;

	out->file = NULL;
	out->line = 0;
	out->ninl = 0;
	out->inl = NULL;
	if (!sl->dw || no_cu_at(sl, addr))
		return;
	if (!find_cu(sl->dw, addr, &cu)) {
		/* No CU (assembly without -g): the scan of every CU that
		 * found nothing is not repeated for the function's other pcs. */
		uint64_t fs, fe;

		if (sl->fn_range(sl->ctx, addr, &fs, &fe))
			subs_add(sl, fs, fe, SUB_NO_CU);
		return;
	}
	lookup_inline(sl, &cu, addr, out);
	if (!(l = dwarf_getsrc_die(&cu, addr)))
		return;
	src = dwarf_linesrc(l, NULL, NULL);
	if (dwarf_lineno(l, &line) == 0)
		out->line = line;
	if (src)
		out->file = strdup(text_basename(src));
}

static int locs_grow(struct srcline *sl)
{
	size_t ncap = sl->cap ? sl->cap * 2 : 64, i;
	struct srcline_loc *nl = calloc(ncap, sizeof(*nl));

	if (!nl)
		return -ENOMEM;
	for (i = 0; i < sl->cap; i++) {
		size_t j;

		if (!sl->locs[i].used)
			continue;
		for (j = (sl->locs[i].addr * 0x9e3779b97f4a7c15ull >> 20) & (ncap - 1); nl[j].used;
		     j = (j + 1) & (ncap - 1))
			;
		nl[j] = sl->locs[i];
	}
	free(sl->locs);
	sl->locs = nl;
	sl->cap = ncap;
	return 0;
}

int srcline_lookup(struct srcline *sl, uint64_t addr, const struct srcline_loc **out)
{
	size_t j;
	int err;

	if (sl->used * 2 >= sl->cap && (err = locs_grow(sl)))
		return err;
	for (j = (addr * 0x9e3779b97f4a7c15ull >> 20) & (sl->cap - 1); sl->locs[j].used;
	     j = (j + 1) & (sl->cap - 1)) {
		if (sl->locs[j].addr == addr) {
			*out = &sl->locs[j];
			return 0;
		}
	}
	pump(); /* a CU's lines are read on its first lookup */
	lookup_line(sl, addr, &sl->locs[j]);
	pump();
	sl->locs[j].addr = addr;
	sl->locs[j].used = true;
	sl->used++;
	*out = &sl->locs[j];
	return 0;
}

int srcline_source_path(struct srcline *sl, uint64_t addr, const char *base, char *buf, size_t size)
{
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nf;

	if (!sl->dw || !find_cu(sl->dw, addr, &cu) || dwarf_getsrcfiles(&cu, &files, &nf) != 0)
		return -ENOENT;
	for (size_t i = 0; i < nf; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);
		Dwarf_Attribute at;
		const char *dir;

		if (!f || strcmp(text_basename(f), base) != 0)
			continue;
		/* A relative name is relative to the CU's compile directory. */
		dir = f[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
		if ((size_t)snprintf(buf, size, "%s%s%s", dir ? dir : "", dir ? "/" : "", f) < size)
			return 0;
	}
	return -ENOENT;
}
