/*
 * memhold — which code path holds the memory it mapped: address ranges of
 * one process, each tagged with the stack that created it, and per stack
 * the bytes still mapped.
 *
 *   memhold_stack(frames) → stack index   (interned; frame refs taken)
 *   memhold_map / memhold_unmap / memhold_remap / memhold_brk  (in time order)
 *   memhold_fault (a sampled page fault: who touches memory)
 *   memhold_rank  (stacks by bytes still held that were created in the
 *                  window; faults in the window alongside)
 *
 * A range unmapped later is subtracted from the stack that created it,
 * whoever unmaps it (free() in another thread, munmap of part of a chunk);
 * a MAP_FIXED mapping over an old one replaces it. brk is a single range
 * per process: growth is attributed to the stack of the brk call, a shrink
 * is taken from the top of the heap. What that means for malloc: brk and
 * mmap are called by malloc when its arena needs more memory, so the stack
 * is the allocation that happened to need it, not every allocation that
 * holds the arena; small allocations freed into malloc's free lists never
 * reach munmap, so a leak of small blocks shows as heap growth attributed
 * to the callers that made the arena grow (a sample of the leakers, often
 * the right one when the leak dominates). Large blocks (over
 * M_MMAP_THRESHOLD, 128 KiB by default and adaptive) are mmap'd one each
 * and attributed exactly.
 *
 * Frames: when built with a frames table, each interned stack holds a
 * reference on its frames (frames_ref) until the stack holds nothing and
 * has no fault in the window (memhold_rank drops it then).
 * Regions past MEMHOLD_REGIONS_MAX are not tracked (counted in
 * memhold_stats.untracked_bytes).
 */
#ifndef STACKTOP_MEMHOLD_H
#define STACKTOP_MEMHOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMHOLD_REGIONS_MAX (1u << 20)
#define MEMHOLD_FAULT_BUCKETS 8
#define MEMHOLD_MAX_FRAMES 128

struct frames;
struct memhold;

struct memhold_row {
	int stack;	      /* index for memhold_frames */
	uint64_t held;	      /* bytes mapped by it and still mapped */
	uint64_t held_window; /* of which created in the window */
	uint64_t faults;      /* sampled page faults in the window (weighted) */
};

struct memhold_stats {
	uint64_t maps, unmaps, remaps, brks; /* events applied */
	uint64_t regions;		     /* tracked now */
	uint64_t untracked_bytes;	     /* mapped past MEMHOLD_REGIONS_MAX */
	uint64_t unknown_unmapped;	     /* bytes unmapped that no tracked region held */
	uint64_t reconciled;		     /* bytes found unmapped by memhold_reconcile */
	uint64_t moves;			     /* regions moved to keep the order (the cost) */
	int stacks;			     /* interned now */
};

/* fr may be NULL (no frame references: tests). window_ns: the span that
 * memhold_rank counts "created in the window" and faults over. */
int memhold_new(struct frames *fr, uint64_t window_ns, struct memhold **out);
void memhold_free(struct memhold *h);
/* The index of this stack (outermost first), interned. -ENOMEM, -EINVAL. */
int memhold_stack(struct memhold *h, const uint32_t *frames, int n);
/* Stack index → its frames (outermost first); NULL for a free slot. */
const uint32_t *memhold_frames(const struct memhold *h, int stack, int *n);

/* [addr, addr+len) was mapped by stack at t_ns (what it overlapped is
 * unmapped first). 0 or -ENOMEM. */
int memhold_map(struct memhold *h, uint64_t addr, uint64_t len, int stack, uint64_t t_ns);
/* Regions mapped from now on stand for weight mappings each (memtrace
 * samples one mmap in weight when calls are many); 1 by default. An unmap
 * takes back what its region counted. */
void memhold_set_weight(struct memhold *h, uint32_t weight);
/* [addr, addr+len) was unmapped. */
void memhold_unmap(struct memhold *h, uint64_t addr, uint64_t len);
/* mremap: the old range goes, the new one is held by stack. */
int memhold_remap(struct memhold *h, uint64_t old_addr, uint64_t old_len, uint64_t new_addr,
		  uint64_t new_len, int stack, uint64_t t_ns);
/* brk returned new_brk (the current end of the heap). The first call for
 * the process only learns where the heap ends unless memhold_brk_start
 * said it before. */
int memhold_brk(struct memhold *h, uint64_t new_brk, int stack, uint64_t t_ns);
void memhold_brk_start(struct memhold *h, uint64_t brk);
/* The process's mappings at before_ns ([start, end) pairs, sorted, from
 * smaps): parts of regions created before then that no mapping covers are
 * unmapped (a munmap record the kernel dropped when calls were too many).
 * Returns the bytes taken back. */
uint64_t memhold_reconcile(struct memhold *h, const uint64_t (*ranges)[2], size_t n,
			   uint64_t before_ns);
/* A sampled page fault of stack, standing for weight faults. */
void memhold_fault(struct memhold *h, int stack, uint64_t weight, uint64_t t_ns);

/* Stacks holding memory or faulting in the window [now - window, now],
 * sorted by held_window (then faults, then held), into a new array (*rows,
 * the caller frees) of *n. Stacks with nothing held and no faults in the
 * window are dropped here (their frame references given back). Faults
 * are counted in MEMHOLD_FAULT_BUCKETS buckets, so the window they cover
 * is exact to a bucket. 0 or -ENOMEM. */
int memhold_rank(struct memhold *h, uint64_t now_ns, struct memhold_row **rows, int *n);
void memhold_stats(const struct memhold *h, struct memhold_stats *out);

#endif
