/*
 * unwind — registers and a copy of the user stack → the list of return
 * addresses.
 *
 * The unwinder walks DWARF CFI (.eh_frame, then .debug_frame) of the module
 * that contains each pc, with a small per-pc rule cache: for the common
 * rules (CFA = rsp|rbp + off; return address and rbp saved at CFA + off, or
 * rbp unchanged) a frame costs a hash probe and two loads. Cache misses are
 * filled from libdw's CFI interpreter (dwarf_getcfi_elf, dwarf_cfi_addrframe,
 * dwarf_frame_cfa, dwarf_frame_register). Where there is no CFI (JIT code,
 * perf-map regions), it follows the rbp chain while it stays inside the stack
 * copy. Memory is read only from the stack copy (and the interrupted
 * stack's, sample.stack2); a read outside it ends the walk and marks the
 * stack truncated, except past a Go signal frame, where the kernel's
 * frame-pointer walk (sample.fpcs) continues it as far as each frame
 * checks out.
 *
 * Output pcs are leaf first: pcs[0] is the sampled ip, pcs[i > 0] is the
 * return address minus one (so it lies inside the calling instruction and
 * symbolizes to the caller's line). One struct unwind per process; it reads
 * mappings from the struct space it is given and keeps its rule cache
 * tagged with space->generation. Where a rule is not one the cache
 * models, libunwind's remote unwinder (lunwind.h) continues the stack.
 */
#ifndef STACKTOP_UNWIND_H
#define STACKTOP_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/sample/sample.h"
#include "stacktop/unwind/space.h"

#define UNWIND_MAX_FRAMES 256

/* Result flags. */
enum {
	UNWIND_TRUNCATED = 1 << 0,     /* walked off the stack copy or hit the frame limit */
	UNWIND_NO_CFI = 1 << 1,	       /* some frame fell back to frame pointers */
	UNWIND_FAILED = 1 << 2,	       /* only the leaf pc is known */
	UNWIND_UNMAPPED = 1 << 3,      /* the leaf pc lies in no known mapping: maps are stale */
	UNWIND_CACHE_STOPPED = 1 << 4, /* the rule cache met a rule it does not model */
	UNWIND_LIBUNWIND = 1 << 5,     /* libunwind added frames where the cache stopped */
};

struct unwind_stats {
	uint64_t samples, frames, cache_hits, cache_misses, truncated, failed;
	/* Walks the rule cache alone truncated (a rule it does not model, or
	 * data missing); how many libunwind was asked to continue (the rule
	 * cases), did continue, and with how many frames. */
	uint64_t fast_truncated, fallback_tried, fallback_continued, fallback_frames;
};

struct unwind;

int unwind_new(struct space *s, struct unwind **out);
void unwind_free(struct unwind *u);

/* Unwind one sample's user stack. Writes up to max pcs into pcs, sets *n
 * and *flags. Returns 0 (even for a truncated or partial stack: that is
 * data) or -EINVAL when the sample carries no registers. */
int unwind_sample(struct unwind *u, const struct sample *smp, uint64_t *pcs, int max, int *n,
		  unsigned *flags);

const struct unwind_stats *unwind_get_stats(const struct unwind *u);

/* On by default: continue with libunwind where the rule cache stops.
 * Off compares the cache alone (tests, bench). */
void unwind_set_fallback(struct unwind *u, bool on);

/* A stub: code with no CFI the caller knows the frame of (CPython's -X
 * perf trampolines, copies in anonymous memory). At a caller's return
 * address the CFA is rsp + cfa_off, the return address at CFA - 8, rbp
 * unchanged (bp_off 0) or saved at CFA + bp_off. */
struct unwind_stub {
	int32_t cfa_off, bp_off;
};
/* Asked on a rule cache miss for a pc (a caller's return address less
 * one) in a mapping of no ELF module: true fills *st. The answer is
 * cached with the pc until the space's generation changes. */
typedef bool (*unwind_stub_fn)(void *ctx, uint64_t pc, struct unwind_stub *st);
void unwind_set_stub(struct unwind *u, unwind_stub_fn fn, void *ctx);

/* libunwind alone over the whole sample (what the fallback runs), for
 * comparisons: same pc convention, *complete as in lunwind_sample. */
int unwind_sample_libunwind(struct unwind *u, const struct sample *smp, uint64_t *pcs, int max,
			    int *n, bool *complete);

#endif
