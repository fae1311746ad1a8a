/*
 * Fuzz entry point: the unwinder (unwind_sample) on hostile registers and
 * stack bytes, over this process's own address space, so the pcs it looks
 * up land in real modules with real CFI (the fuzzer, libc, libdw, ...).
 *
 * On the first call: space_load(getpid()) and unwind_new, kept for the run
 * (the rule cache and the per-module CFI handles carry over between inputs,
 * as they do between samples). Per input:
 *
 *   byte 0      flags: 1 rip raw (else in a code mapping), 2 rbp raw (else
 *               rsp + a small offset), 4 registers missing (a random
 *               regs_mask), 8 no stack copy, 16 ready-made pcs (upcs),
 *               32 the copy's second half is an interrupted stack's copy
 *               (stack2) at rsp + 64 KiB, and its words a frame-pointer
 *               callchain (fpcs)
 *   byte 1      max frames (1..256)
 *   bytes 2-6   rip: a code mapping (byte 2) and an offset in it (3-6)
 *   bytes 7-14  rsp;  15-22 rbp (or 15-16: its offset from rsp)
 *   bytes 23-   the stack copy, at rsp. A word whose top byte is 0xee is
 *               replaced by a code address (mapping byte 0, offset 1-4),
 *               0xdd by rsp + its low 16 bits (a saved frame pointer), so
 *               mutations can build call chains.
 *
 * The other registers are the leaf's, derived from rsp (CFI rules may name
 * them at frame 0). The copy is malloc'd at its exact size, so ASan traps a
 * read past it.
 *
 * Properties: 0 or -EINVAL (and -EINVAL only without rip/rsp and upcs);
 * 0 <= n <= max, n >= 1 when registers are given and pcs[0] is rip; flags
 * only the UNWIND_* bits; UNWIND_FAILED only with TRUNCATED and one frame.
 * Where the rule cache stops, libunwind's fallback (lunwind.c) walks the
 * same hostile copy: the same properties hold, and ASan watches its reads.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stacktop/sample/sample.h"
#include "stacktop/unwind/space.h"
#include "stacktop/unwind/unwind.h"

static struct space sp;
static struct unwind *uw;
static size_t code[512];
static size_t ncode;

static void setup(void)
{
	if (space_load(&sp, getpid()) || unwind_new(&sp, &uw))
		abort();
	/* Executable mappings with a module first: that is where CFI is. */
	for (size_t i = 0; i < sp.nmaps && ncode < 512; i++)
		if ((sp.maps[i].prot & PROT_EXEC) && sp.maps[i].mod)
			code[ncode++] = i;
	for (size_t i = 0; i < sp.nmaps && ncode < 512 && !ncode; i++)
		if (sp.maps[i].prot & PROT_EXEC)
			code[ncode++] = i;
	if (!ncode)
		abort();
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A code address: mapping chosen by sel, at off into it. */
static uint64_t code_addr(uint8_t sel, uint32_t off)
{
	const struct mapping *m = &sp.maps[code[sel % ncode]];
	uint64_t len = m->end - m->start;
	return m->start + (len ? off % len : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[23] = {0};
	struct sample s;
	uint64_t *pcs, *upcs = NULL, *fpcs = NULL;
	uint8_t *stack = NULL;
	size_t nstack;
	int n = -1, max, rc;
	unsigned flags = ~0u;

	if (!uw)
		setup();
	memcpy(hdr, data, size < sizeof(hdr) ? size : sizeof(hdr));
	nstack = size > sizeof(hdr) ? size - sizeof(hdr) : 0;
	max = 1 + hdr[1];
	if (max > UNWIND_MAX_FRAMES)
		max = UNWIND_MAX_FRAMES;

	memset(&s, 0, sizeof(s));
	s.pid = s.tid = getpid();
	s.weight = 1;
	s.syscall_nr = -1;
	uint64_t rsp = get_le(hdr + 7, 8);
	for (int r = 0; r < SAMPLE_NREGS; r++)
		s.regs[r] = rsp + (uint64_t)r * 8;
	s.regs[SAMPLE_REG_RSP] = rsp;
	s.regs[SAMPLE_REG_RIP] =
	    hdr[0] & 1 ? get_le(hdr + 2, 5) : code_addr(hdr[2], (uint32_t)get_le(hdr + 3, 4));
	s.regs[SAMPLE_REG_RBP] = hdr[0] & 2 ? get_le(hdr + 15, 8) : rsp + get_le(hdr + 15, 2);
	s.regs_mask = hdr[0] & 4 ? (uint32_t)get_le(hdr + 17, 3) : (1u << SAMPLE_NREGS) - 1;

	if (!(hdr[0] & 8) && nstack) {
		if (!(stack = malloc(nstack)))
			return 0;
		memcpy(stack, data + sizeof(hdr), nstack);
		for (size_t o = 0; o + 8 <= nstack; o += 8) {
			uint64_t w = get_le(stack + o, 8), v = w;
			if (stack[o + 7] == 0xee)
				v = code_addr(stack[o], (uint32_t)get_le(stack + o + 1, 4));
			else if (stack[o + 7] == 0xdd)
				v = rsp + (w & 0xffff);
			memcpy(stack + o, &v, 8);
		}
		s.stack = stack;
		s.stack_size = nstack;
	}
	if ((hdr[0] & 32) && stack && nstack >= 16) {
		size_t half = nstack / 2 & ~(size_t)7;
		s.stack_size = half;
		s.stack2 = stack + half;
		s.stack2_base = rsp + 0x10000;
		s.stack2_size = nstack - half;
		s.nfpcs = (int)(nstack / 8);
		if ((fpcs = malloc((size_t)s.nfpcs * 8))) {
			memcpy(fpcs, stack, (size_t)s.nfpcs * 8);
			s.fpcs = fpcs;
		} else {
			s.nfpcs = 0;
		}
	}
	if (hdr[0] & 16) {
		/* Ready-made pcs (a sampler that unwound already). */
		s.nupcs = (int)(nstack / 8);
		if (s.nupcs && (upcs = malloc((size_t)s.nupcs * 8))) {
			memcpy(upcs, data + sizeof(hdr), (size_t)s.nupcs * 8);
			s.upcs = upcs;
		} else {
			s.nupcs = 0;
		}
	}

	if (!(pcs = malloc((size_t)max * sizeof(*pcs))))
		abort();
	rc = unwind_sample(uw, &s, pcs, max, &n, &flags);
	const uint32_t need = 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RIP;
	bool regs = (s.regs_mask & need) == need;
	if (rc == -EINVAL) {
		if (regs || s.nupcs > 0)
			abort(); /* refused a sample it could unwind */
	} else if (rc != 0) {
		abort();
	} else {
		if (n < 0 || n > max || (regs && (n < 1 || pcs[0] != s.regs[SAMPLE_REG_RIP])))
			abort();
		if (flags & ~(unsigned)(UNWIND_TRUNCATED | UNWIND_NO_CFI | UNWIND_FAILED |
					UNWIND_UNMAPPED | UNWIND_CACHE_STOPPED | UNWIND_LIBUNWIND))
			abort();
		if ((flags & UNWIND_FAILED) && (!(flags & UNWIND_TRUNCATED) || n != 1))
			abort();
		if (!regs && memcmp(pcs, s.upcs, (size_t)n * sizeof(*pcs)))
			abort();
	}
	free(pcs);
	free(upcs);
	free(fpcs);
	free(stack);
	return 0;
}
