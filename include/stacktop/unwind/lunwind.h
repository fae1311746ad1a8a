/*
 * lunwind — libunwind's remote unwinder over one sample: the fallback for
 * the frames unwind.c's rule cache does not model (CFA expressions, a CFA
 * based on a register other than rsp/rbp above the leaf, register rules).
 *
 * libunwind is given its own accessors (unw_create_addr_space), never the
 * stock _UPT_* ones (one ptrace syscall per word): registers come from the
 * sample, memory from the sample's stack copy and, for the unwind tables,
 * from the ELF images space.c already holds (found through the module's
 * PT_GNU_EH_FRAME and its binary-search table). Nothing reads the target.
 *
 * Output follows unwind.h: leaf first, pcs[0] the sampled ip, callers at
 * return address - 1 except right after a signal frame. One struct lunwind
 * per struct space; libunwind's global cache is flushed when the space's
 * generation changes. Not thread-safe (one per process, on the ingest
 * thread, like unwind).
 */
#ifndef STACKTOP_LUNWIND_H
#define STACKTOP_LUNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/sample/sample.h"
#include "stacktop/unwind/space.h"

struct lunwind;

int lunwind_new(struct space *s, struct lunwind **out);
void lunwind_free(struct lunwind *l);

/* Walk smp from its leaf. Writes up to max pcs, sets *n and *complete
 * (true when the walk reached the outermost frame, not a read outside the
 * copy or a frame without unwind info). 0, or -EINVAL when the sample has
 * no rip/rsp. */
int lunwind_sample(struct lunwind *l, const struct sample *smp, uint64_t *pcs, int max, int *n,
		   bool *complete);

#endif
