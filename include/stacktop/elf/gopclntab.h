/*
 * gopclntab — Go's own function table: names, file:line, inline frames and
 * stack-pointer deltas of a Go binary, stripped or not.
 *
 * Why: `go build -ldflags="-s -w"` (the usual production build) drops
 * .symtab and DWARF, and Go emits no .eh_frame; yet the runtime needs its
 * tracebacks, so the binary keeps .gopclntab: the function table (entry
 * pcs sorted, each with its _func record), the names, the file tables, and
 * per function pc→value tables: pcsp (bytes the function has pushed below
 * its entry SP), pcfile and pcln (position), pcdata InlTreeIndex (which
 * inlined call a pc is in; the tree itself is a funcdata in go:func.*,
 * which moduledata points at). This module reads them.
 *
 * Layouts read: Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19 (0xfffffff0)
 * and 1.20 and later (0xfffffff1); little-endian, 4- or 8-byte pointers.
 * Older tables (0xfffffffb) are refused.
 *
 * Contract: the table's bytes are the target's (hostile, fuzzed by
 * tests/fuzz/fuzz_gopclntab.c): every offset and length is checked against
 * the bytes given, a pc→value walk is bounded by the table's size, a name
 * is handed out only when it ends (NUL) inside its table. struct gopclntab
 * borrows the bytes (from the caller's Elf image, or a buffer) and
 * allocates nothing: the caller keeps the bytes alive while it uses it, and
 * there is nothing to free. Strings returned point into those bytes. Lookup
 * is a binary search of the function table, no index is built. Thread safe
 * (reads only); nothing prints.
 */
#ifndef STACKTOP_GOPCLNTAB_H
#define STACKTOP_GOPCLNTAB_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A parsed header: where each table is (offsets into data). */
struct gopclntab {
	const uint8_t *data;
	size_t size;
	int version;	 /* 116, 118 or 120 */
	uint8_t quantum; /* pc quantum (1 on x86) */
	uint8_t ptrsize; /* 4 or 8 */
	uint64_t nfunc;	 /* functions in the function table */
	uint64_t text;	 /* where entry offsets count from (1.18+) */
	uint64_t funcnames, cutab, filetab, pctab, functab; /* offsets into data */
	size_t funcnames_len, cutab_len, filetab_len, pctab_len, functab_len;
	/* go:func.* (1.18+: funcdata are offsets from it; 1.16: absolute
	 * addresses), for the inline tree: the bytes of the section holding
	 * it, loaded at region_addr. NULL: no inline frames. */
	const uint8_t *region;
	size_t region_size;
	uint64_t region_addr, gofunc;
};

/* One function of the table. */
struct gopclntab_func {
	uint64_t entry, end; /* [entry, end) */
	const char *name;    /* in the table, NUL-terminated; "" when its name is unreadable */
	uint64_t off;	     /* its _func record (offset into data) */
};

/* One inlined level at a pc, innermost first. */
struct gopclntab_inl {
	const char *func; /* NUL-terminated, in the table or the go:func region */
	const char *file; /* where this level is now: NULL when unknown */
	int line;
};

#define GOPCLNTAB_MAGIC_116 0xfffffffau
#define GOPCLNTAB_MAGIC_118 0xfffffff0u
#define GOPCLNTAB_MAGIC_120 0xfffffff1u

/* Parse the header of a table of size bytes at data. text_hint: the
 * address of .text, used when the header's text start is 0 (a PIE's is
 * filled by a relocation). 0, or -ENOEXEC (not a table of a known
 * layout, or an offset outside the bytes). */
int gopclntab_parse(const uint8_t *data, size_t size, uint64_t text_hint, struct gopclntab *g);

/* The table of an ELF file: its .gopclntab section (also when .symtab is
 * gone), else ".data.rel.ro.gopclntab", else found by its magic in
 * .data.rel.ro, .rodata or .noptrdata (a header that parses, a first
 * function with a name: a linker that did not name it); with go:func.* found through
 * moduledata (a pointer to the table in .noptrdata) when the sections
 * holding them are in the image. 0, or -ENOENT (no readable table). */
int gopclntab_read(Elf *elf, struct gopclntab *g);

/* Give the table the go:func.* region: region_size bytes at region loaded
 * at region_addr, and the address gofunc of go:func.* (1.18+). */
void gopclntab_set_region(struct gopclntab *g, const uint8_t *region, size_t region_size,
			  uint64_t region_addr, uint64_t gofunc);

/* The function holding pc. 0, or -ENOENT. */
int gopclntab_find(const struct gopclntab *g, uint64_t pc, struct gopclntab_func *f);

/* Function i of the table (0 <= i < g->nfunc), for a walk over all of
 * them. 0, or -ENOENT. */
int gopclntab_nth(const struct gopclntab *g, uint64_t i, struct gopclntab_func *f);

/* The file and line of pc in f. 0 (file NULL when its name is unreadable),
 * or -ENOENT. */
int gopclntab_line(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t pc,
		   const char **file, int *line);

/* Bytes f has pushed below its entry SP at pc (its return address is at
 * SP + *delta). 0, or -ENOENT. */
int gopclntab_sp_delta(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t pc,
		       int32_t *delta);

/* The inline chain at pc in f: out[0] the innermost inlined function with
 * pc's own file:line, out[i] the next one out with the position of its
 * call of out[i - 1]; *n levels (0: not in inlined code, or no region).
 * The position of the outermost call, in f itself, goes to *file and *line
 * (untouched when *n is 0). At most max levels. Always 0. */
int gopclntab_inline(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t pc,
		     struct gopclntab_inl *out, int max, int *n, const char **file, int *line);

/* The function's name at an entry of the go runtime that starts a stack
 * (runtime.goexit, mstart, rt0_go, mcall, systemstack...): an unwinder
 * stops there, cleanly. */
bool gopclntab_is_stack_top(const char *name);

#endif
