/*
 * fde — function ranges from an ELF file's .eh_frame and .debug_frame.
 *
 * Those sections hold one FDE per function (its range), even in a
 * stripped file: they are what a stripped function is told apart by (sym
 * names a pc no symbol covers by the FDE that holds it). libdw's CFI API
 * answers "the FDE of this pc" but cannot list the FDEs, so they are
 * parsed here.
 *
 * Contract: fde_parse reads one section's bytes (the target's: hostile
 * input, fuzzed by tests/fuzz/fuzz_fde.c) and fde_read both sections of an
 * Elf the caller keeps; each returns a malloc'd array sorted by start that
 * the caller frees. fde_find searches such an array. Nothing is kept
 * between calls; nothing prints.
 */
#ifndef STACKTOP_FDE_H
#define STACKTOP_FDE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A function range from .eh_frame or .debug_frame: [start, end). */
struct fde_range {
	uint64_t start, end;
};

/* Parse the FDEs of one .eh_frame (debug_frame false) or .debug_frame
 * section loaded at addr (sh_addr) into a malloc'd array sorted by start
 * (*out NULL when *n is 0). Entries it cannot read are skipped; 0 or
 * -ENOMEM. */
int fde_parse(const uint8_t *data, size_t size, uint64_t addr, bool debug_frame,
	      struct fde_range **out, size_t *n);

/* The ranges of elf's .eh_frame and .debug_frame together, sorted by
 * start: 0 (none when it has neither section), or -ENOMEM with none. */
int fde_read(Elf *elf, struct fde_range **out, size_t *n);

/* The range of r[0..n) (sorted by start, not nesting) holding addr, or
 * NULL. */
const struct fde_range *fde_find(const struct fde_range *r, size_t n, uint64_t addr);

#endif
