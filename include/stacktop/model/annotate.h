/*
 * annotate — one function, instruction by instruction: which of its
 * instructions (and source lines) its own samples in the window fall on.
 *
 * Counting (per-address aggregation): a sample belongs to the function when
 * the physical frame of its leaf (wait pseudo frames and inlined levels
 * skipped: they share the pc) is that function, keyed by (kernel, module,
 * function) by content like the top view's rows. The sample counts at the
 * leaf's offset in the function (sym.offset), so the same binary in several
 * processes adds up; the hottest (pid, function start) is the instance whose
 * code is read. One pass over the window's live counts: O(counts × depth of
 * the inline/wait run at the leaf).
 *
 * Code: read from the live target's memory (process_vm_readv), which is
 * also where JIT code is; for a saved profile whose frames kept their
 * origin (path, build-id, ELF address: pprof written by stacktop), from the
 * binary if it is still there with the same build-id; the function's extent is its symbol size, its
 * .eh_frame range (a stripped function) or its perf map entry. Disassembled
 * with capstone; jump and call targets are named through sym. Source lines
 * come from the DWARF line table (sym), their text from the file DWARF names,
 * opened through the target's root (tfile), else from the --source-path
 * directories by basename; without a readable file a line is a file:line
 * marker. Every string kept is sanitized (text_sanitize): it is drawn as is.
 *
 * Contract: annotate_find or annotate_match_frame names a function →
 * annotate_open (code, lines: once) → annotate_update on each refresh (the
 * counts) → annotate_close. The struct annotate is the caller's; sym is
 * borrowed. Nothing prints.
 */
#ifndef STACKTOP_ANNOTATE_H
#define STACKTOP_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/unwind/space.h"

struct frame;
struct sym;
struct window;

/* A function to annotate, and its hottest instance. */
struct annotate_match {
	char module[128];
	char func[256]; /* raw (sanitized when copied into lines) */
	bool kernel, jit;
	int pid;	     /* of the hottest instance; 0: none live (a saved profile) */
	uint64_t func_start; /* runtime address in pid */
	uint64_t func_size;  /* 0: unknown */
	uint64_t self;	     /* samples whose leaf is in the function */
	/* A saved profile that kept addresses (pid 0): the binary, its
	 * build-id when recorded, and an ELF address in the function. */
	char path[512];
	char build_id[64];
	uint64_t elf_addr;
	/* Count only this process's samples (the whole machine narrowed to
	 * it: the same binary in other processes left out); 0: every one. */
	int only_pid;
};

/* Samples at one offset from the function's start. */
struct annotate_addr {
	uint64_t off;
	uint64_t count;
};

enum annotate_kind {
	ANNOTATE_INSN = 0, /* one instruction */
	ANNOTATE_SRC,	   /* a source line, text read from the file */
	ANNOTATE_MARK,	   /* file:line only (no readable source) */
};

struct annotate_line {
	uint8_t kind;	 /* enum annotate_kind */
	bool call;	 /* a call with a known target */
	uint64_t addr;	 /* INSN: runtime address; SRC/MARK: of its first instruction */
	uint64_t target; /* call/jump target (runtime), 0: none */
	uint64_t count;	 /* INSN: its samples; SRC/MARK: its instructions' up to the next */
	int line;	 /* SRC/MARK: line number */
	char text[192];	 /* sanitized */
};

struct annotate_src; /* source files read (annotate.c) */

struct annotate {
	struct annotate_match m;
	struct annotate_line *lines;
	size_t n;
	uint64_t total; /* = m.self after annotate_update */
	size_t ninsn;
	bool has_source; /* some line's text was read */
	char note[256];	 /* why there is no code or no source (one sentence), or "" */
	/* Owned while open. */
	struct space sp;
	bool sp_loaded;
	struct module *mod; /* offline: the binary (referenced) */
	struct sym *own_sy; /* offline without the caller's sym */
	uint64_t base;	    /* counts' offsets are from here: func_start live, 0 offline */
	struct annotate_src *srcs;
	size_t nsrcs;
};

/* Per-address aggregation: the samples of the function m names (module,
 * func, kernel), by offset, sorted by offset. *out malloc'd (also when *n
 * is 0), caller frees. Also fills m->pid, func_start, func_size and self
 * from the hottest instance. 0 or -ENOMEM. */
int annotate_count(const struct window *w, struct annotate_match *m, struct annotate_addr **out,
		   size_t *n);

/* m from a frame as a view shows it (names only are used). -ENOENT for a
 * frame without a function name (a wait frame, an address). */
int annotate_match_frame(const struct frame *f, struct annotate_match *m);

/* The function called name among the leaves in the window: an exact name
 * first, else names containing it; with several, the hottest. *nmatches
 * says how many functions matched; others (may be NULL) lists the next
 * few, sanitized. -ENOENT when none. */
int annotate_find(const struct window *w, const char *name, struct annotate_match *m, int *nmatches,
		  char *others, size_t osize);

/* The sampled function whose start is addr in pid (Enter on a call), or
 * -ENOENT. */
int annotate_find_addr(const struct window *w, int pid, uint64_t addr, struct annotate_match *m);

/* Read, disassemble and line up m's code (after annotate_count filled the
 * instance). srcdirs: --source-path directories (NULL-terminated, may be
 * NULL). A function that cannot be read leaves a->n == 0 and a->note
 * saying why; 0 or -ENOMEM. */
int annotate_open(struct annotate *a, struct sym *sy, const struct annotate_match *m,
		  const char *const *srcdirs);

/* The window's counts into the lines (on each refresh). 0 or -ENOMEM. */
int annotate_update(struct annotate *a, const struct window *w);

void annotate_close(struct annotate *a);

#endif
