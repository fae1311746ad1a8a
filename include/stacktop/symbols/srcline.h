/*
 * srcline — what DWARF says about an address of one module: its file:line
 * and its inline chain (the inlined subroutines holding it, innermost
 * first, each with the call site in the next level out), from libdw.
 *
 * Contract: srcline_new takes a Dwarf handle (NULL: the module has no
 * DWARF; every lookup then answers "unknown") and a function telling the
 * symbol range that holds an address (the module's symbol table: sym).
 * The struct srcline owns the handle (dwarf_end in srcline_free) and a
 * cache per address: each address is looked up in DWARF once, then found
 * by a hash probe. The entries srcline_lookup returns, and their strings,
 * live until srcline_free. sym keeps one per module table, built on first
 * need; the Elf behind the Dwarf must outlive it. Not thread safe;
 * nothing prints.
 *
 * Inline chains are walked down from the subprogram holding the address
 * (found once per function, its ranges cached): dwarf_getscopes would walk
 * the whole CU for every pc, ~200 µs in a libc CU. Code DWARF describes no
 * function for (assembly), or that lies in no CU, is remembered by its
 * symbol's range, so its other pcs do not walk the CU again. The DWARF is
 * the target's: every walk is bounded (SYM_INLINE_MAX levels; namespaces
 * and classes 8 deep), and loops, not recursion, follow its nesting.
 */
#ifndef STACKTOP_SRCLINE_H
#define STACKTOP_SRCLINE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct srcline;

/* One inlined level at an address: the function and where it was called
 * from (in the next level out). Strings owned by the srcline. */
struct srcline_inl {
	char *func;	 /* demangled; "[inlined]" when DWARF has no name */
	char *call_file; /* basename; NULL when unknown */
	int call_line;
};

/* What DWARF says about one address: its line and its inline chain,
 * innermost first (ninl 0: not in inlined code). */
struct srcline_loc {
	uint64_t addr;
	char *file; /* basename, owned; NULL when unknown */
	int line;   /* 0 when unknown */
	bool used;  /* (a slot of the cache) */
	uint8_t ninl;
	struct srcline_inl *inl;
};

/* A new srcline over dw (taken, also on failure; may be NULL). fn_range
 * answers the symbol range [*start, *end) holding addr, or false; ctx is
 * passed to it. 0 or -ENOMEM. */
int srcline_new(Dwarf *dw,
		bool (*fn_range)(void *ctx, uint64_t addr, uint64_t *start, uint64_t *end),
		void *ctx, struct srcline **out);
void srcline_free(struct srcline *sl);

/* Has DWARF at all (a lookup may still find nothing). */
bool srcline_has_dwarf(const struct srcline *sl);

/* file:line and inline chain of an ELF address, cached. 0 or -ENOMEM. */
int srcline_lookup(struct srcline *sl, uint64_t addr, const struct srcline_loc **out);

/* The full path DWARF gives for the source file called base (a basename as
 * srcline_loc.file has) in the CU holding addr, written to buf (raw target
 * text): a relative name is joined to the CU's compile directory. 0, or
 * -ENOENT. */
int srcline_source_path(struct srcline *sl, uint64_t addr, const char *base, char *buf,
			size_t size);

#endif
