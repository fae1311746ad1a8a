/*
 * capture.h — a sample of this very process, as perf takes one: a leaf
 * reads rip/rsp/rbp with inline asm (CAPTURE), copies its stack up to the
 * end of the stack mapping, and takes glibc's backtrace() at the same point
 * (libgcc's view, to compare with). make_sample turns the capture into a
 * struct sample. Set cap_space to a space loaded for getpid() before the
 * first CAPTURE (it tells where the stack mapping ends). Include after the
 * system headers and cmocka.h; static, so one copy per test binary.
 */
#ifndef STACKTOP_TEST_CAPTURE_H
#define STACKTOP_TEST_CAPTURE_H

#include <execinfo.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/sample/sample.h"
#include "stacktop/unwind/space.h"

#define COPY_MAX (64 * 1024)
#define BT_MAX 128

/* One captured "sample": registers, stack copy and libgcc's view. */
struct capture {
	uint64_t regs[SAMPLE_NREGS];
	uint8_t stack[COPY_MAX];
	uint64_t size;
	void *bt[BT_MAX];
	int nbt;
};

static struct capture cap;
static const struct space *cap_space;

/* The callee-saved registers besides rbp (rbx, r12-r15), as the leaf had
 * them: what a perf sample also carries, and what libunwind and libdw need
 * where a CFA is based on one of them. */
static uint64_t cap_saved[5];
static const int cap_saved_reg[5] = {3, 12, 13, 14, 15};

/* Copy [rsp, stack end) up to limit, then take backtrace() from here. */
__attribute__((noipa)) static void capture_finish(uint64_t rip, uint64_t rsp, uint64_t rbp,
						  uint64_t limit)
{
	const struct mapping *m = space_find(cap_space, rsp);
	uint64_t avail = m ? m->end - rsp : 0;

	memset(cap.regs, 0, sizeof(cap.regs));
	for (int i = 0; i < 5; i++)
		cap.regs[cap_saved_reg[i]] = cap_saved[i];
	cap.regs[SAMPLE_REG_RIP] = rip;
	cap.regs[SAMPLE_REG_RSP] = rsp;
	cap.regs[SAMPLE_REG_RBP] = rbp;
	cap.size = avail < limit ? avail : limit;
	memcpy(cap.stack, (const void *)(uintptr_t)rsp, cap.size);
	cap.nbt = backtrace(cap.bt, BT_MAX);
}

/* rip, rsp, rbp at one instruction: the rule for rip must describe rsp. */
#define CAPTURE(limit)                                                                             \
	do {                                                                                       \
		uint64_t rip_, rsp_, rbp_;                                                         \
		__asm__ volatile("mov %%rbx, %3\n\tmov %%r12, %4\n\tmov %%r13, %5\n\t"             \
				 "mov %%r14, %6\n\tmov %%r15, %7\n\t"                              \
				 "lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"              \
				 : "=r"(rip_), "=r"(rsp_), "=r"(rbp_), "=m"(cap_saved[0]),         \
				   "=m"(cap_saved[1]), "=m"(cap_saved[2]), "=m"(cap_saved[3]),     \
				   "=m"(cap_saved[4])                                              \
				 :                                                                 \
				 : "memory");                                                      \
		capture_finish(rip_, rsp_, rbp_, limit);                                           \
	} while (0)

/* The capture as a sample of this process with size bytes of its copy. */
static void make_sample(struct sample *smp, uint64_t size)
{
	memset(smp, 0, sizeof(*smp));
	smp->pid = smp->tid = getpid();
	smp->weight = 1;
	memcpy(smp->regs, cap.regs, sizeof(smp->regs));
	smp->regs_mask = 1u << SAMPLE_REG_RIP | 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RBP;
	for (int i = 0; i < 5; i++)
		smp->regs_mask |= 1u << cap_saved_reg[i];
	smp->stack = cap.stack;
	smp->stack_size = size;
}

/* A known call chain, unw_a → unw_b → unw_c, that captures itself in its
 * leaf: what the unwinder and ingest tests walk back. noipa keeps each a
 * real frame with its own name. */
static volatile int cap_sink;

__attribute__((noipa, used)) static int unw_c(int x)
{
	volatile char buf[64];

	buf[x & 63] = (char)x;
	CAPTURE(COPY_MAX);
	return buf[x & 63] + 1;
}

__attribute__((noipa, used)) static int unw_b(int x)
{
	int r = unw_c(x + 1);

	cap_sink += r;
	return r + 2;
}

__attribute__((noipa, used)) static int unw_a(int x)
{
	int r = unw_b(x * 2);

	cap_sink += r;
	return r + 3;
}

#endif
