/*
 * sample — one stack sample as the samplers hand it to the unwinder.
 *
 * A sample borrows its memory: regs are inline, but stack, kernel pcs and
 * ready-made user pcs point into the sampler's buffers and are valid only
 * until the sampler's next read. Registers use DWARF numbering for x86-64
 * (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15,
 * 16 rip), which is what CFI rules name.
 */
#ifndef STACKTOP_SAMPLE_H
#define STACKTOP_SAMPLE_H

#include <stdint.h>

#include "stacktop/proc/waits.h"

#define SAMPLE_NREGS 17
enum {
	SAMPLE_REG_RBP = 6,
	SAMPLE_REG_RSP = 7,
	SAMPLE_REG_RIP = 16,
};

/* What the thread was doing when sampled. */
enum sample_state {
	SAMPLE_ONCPU = 0,
	SAMPLE_OFFCPU,
};

struct sample {
	int pid, tid;
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint32_t weight;  /* samples this one stands for (normally 1) */
	enum sample_state state;
	enum sample_wait wait; /* NONE for on-CPU samples; CPU for runnable ones */
	int syscall_nr;	       /* the syscall it waits in, -1 when none or unknown */
	char wchan[32];	       /* kernel function it sleeps in, "" when unknown */
	uint64_t regs[SAMPLE_NREGS];
	uint32_t regs_mask;   /* bit n set: regs[n] is valid */
	const uint8_t *stack; /* copy of user memory starting at regs[RSP] */
	uint64_t stack_size;  /* valid bytes in stack */
	/* A second copy, of the stack a signal interrupted, when the first
	 * holds a signal frame on an alternate stack (Go's handlers run on
	 * their own): [stack2_base, stack2_base + stack2_size). Wall mode
	 * reads it while the thread is stopped; 0 bytes otherwise. */
	const uint8_t *stack2;
	uint64_t stack2_base, stack2_size;
	const uint64_t *kpcs; /* kernel frames, leaf first */
	int nkpcs;
	const uint64_t *upcs; /* user frames already unwound, leaf first (may be 0) */
	int nupcs;
	/* The kernel's frame-pointer walk of the user stack at the sample
	 * (perf's user callchain: the pc, then [fp + 8] of each frame record
	 * from the sampled rbp), unchecked: the unwinder uses it only past a
	 * Go signal frame, where the stack it needs is not in the copy. */
	const uint64_t *fpcs;
	int nfpcs;
	/* A saved profile: frames already interned in the frames table,
	 * outermost first; when set, nothing above but pid, tid, time and
	 * weight is read. */
	const uint32_t *frame_ids;
	int nframe_ids;
};

#endif
