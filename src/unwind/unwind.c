/*
 * unwind — DWARF CFI stack walking over a sample's stack copy (x86-64).
 *
 * Contract: one struct unwind per struct space (per process); the space must
 * outlive it. unwind_sample reads only the sample's registers and its stack
 * copy [regs[RSP], regs[RSP] + stack_size) (and the interrupted stack's
 * copy a sampler made beside it, stack2): never target memory, never a
 * syscall. Not thread-safe: the per-module CFI handles it hangs off
 * module->ext[SPACE_EXT_UNWIND] are created lazily on first use, so all
 * unwinders must run on one thread.
 *
 * Design (see shared/notes/sampler-unwinder-symbolizer.md §0, §2, §7): a
 * direct-mapped cache of compact rules keyed by the lookup pc and tagged
 * with space->generation. A rule says how to get the caller's CFA, return
 * address and rbp from this frame's rsp/rbp:
 *   CFA = reg + off | *(reg + off) | PLT stub rule
 *   RA, rbp = same value | undefined | [CFA + off] | CFA + off | [reg + off]
 * That covers compiled code, glibc's hand-written asm, stack realignment
 * (CFA = *(rbp - 8)) and the signal trampoline __restore_rt (CFA and
 * registers loaded from the ucontext at rsp + off). Misses are filled from
 * libdw: .eh_frame via dwarf_getcfi_elf, then .debug_frame via
 * dwarf_begin_elf + dwarf_getcfi when .eh_frame has no FDE for the pc.
 *
 * libdw 0.188 quirks (measured): the CFA comes back as one DW_OP_bregx(reg,
 * off) op; "saved at CFA+off" as DW_OP_call_frame_cfa; DW_OP_plus_uconst
 * with a negative off wrapped to uint64; expression rules get a
 * DW_OP_call_frame_cfa prepended (the CFA is pushed first, per DWARF);
 * value rules end in DW_OP_stack_value; *ops == NULL with *nops == 0 means
 * "same value", *ops == ops_mem with *nops == 0 means "undefined".
 *
 * Frame 0 uses the sampled pc; callers are looked up at ra - 1 (inside the
 * call instruction: ra itself may be the first byte of the next function
 * when the call was the last instruction of a noreturn path), except after
 * a signal frame, whose "return address" is the exact interrupted pc.
 *
 * PLT rule: the linker's .plt FDE computes CFA = rsp + 8 + ((rip & 15) >= 11)
 * * 8 (after the push of the lazy-binding index, rsp moved by 8), as
 * async-profiler's walkDwarf special-cases it; we match that expression.
 *
 * Epilogues: after `pop %rbp` gcc's CFI still says rbp is saved at
 * CFA - 16, now below rsp and outside the copy; in the leaf such a slot
 * means "already popped" and rbp itself is the caller's (see popped()).
 *
 * Go code has no CFI (Go emits no .eh_frame; -w drops .debug_frame): its
 * .gopclntab's pcsp table gives CFA = rsp + delta + 8, the return address
 * at CFA - 8, rbp at CFA - 16 when the function has a frame; the runtime's
 * stack starts (goexit, mstart, systemstack...) end the walk; its signal
 * restorer runtime.sigreturn gets the ucontext rule (elf/gopclntab.h).
 * Go's handlers run on a signal stack: past the ucontext the goroutine's
 * stack is read from the sampler's second copy (stack2) when there is
 * one, else its callers come from perf's user callchain where each can be
 * checked (go_signal_splice).
 *
 * Without CFI (no module, or no FDE: JIT code, hand-written asm) the walker
 * follows rbp: CFA = rbp + 16, RA at [rbp + 8], caller's rbp at [rbp].
 *
 * Where the cache gives up (a rule it does not model: a CFA expression
 * other than the two above, a register rule, a CFA based on a register it
 * does not track above the leaf), libunwind takes over (lunwind.c): it
 * walks the same sample again from the leaf, tracking every register, and
 * when its first frames are ours its remaining ones are appended. Only
 * truncated samples pay for it (measured in bench/README.md).
 */
#include "stacktop/unwind/unwind.h"
#include "stacktop/elf/gopclntab.h"
#include "stacktop/unwind/lunwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BITS 12
#define CACHE_SLOTS (1u << CACHE_BITS)
#define REG_RA 16

enum rule_kind {
	RULE_EMPTY = 0,
	RULE_CFI,	/* a simple rule */
	RULE_NOCFI,	/* no CFI for this pc: walk frame pointers */
	RULE_OUTERMOST, /* RA undefined: the walk ends here, cleanly */
	RULE_COMPLEX,	/* a rule we cannot evaluate: the walk ends, truncated */
};

enum cfa_kind {
	CFA_REG,   /* CFA = reg + off */
	CFA_DEREF, /* CFA = *(reg + off) */
	CFA_PLT,   /* CFA = rsp + 8 + ((pc & 15) >= off ? 8 : 0) */
};

enum loc_kind {
	LOC_SAME,    /* the caller's value is this frame's value */
	LOC_UNDEF,   /* not recoverable */
	LOC_AT_CFA,  /* saved at [CFA + off] */
	LOC_VAL_CFA, /* the value is CFA + off */
	LOC_AT_REG,  /* saved at [reg + off] (reg is this frame's rsp or rbp) */
};

struct loc {
	uint8_t kind, reg;
	int32_t off;
};

struct rule {
	uint8_t kind, cfa_kind, cfa_reg;
	bool signal;   /* a signal trampoline: the caller's pc is exact */
	bool uctx;     /* a signal return: the caller's registers from a ucontext */
	bool unmapped; /* the pc lies in no known mapping */
	int32_t cfa_off;
	struct loc ra, bp;
};

struct slot {
	uint64_t pc;
	unsigned gen;
	struct rule r;
};

struct unwind {
	struct space *space;
	struct unwind_stats stats;
	struct lunwind *lu; /* made on the first truncated walk */
	bool no_fallback;
	unwind_stub_fn stub;
	void *stub_ctx;
	struct slot cache[CACHE_SLOTS];
};

/* Per-module CFI handles, in module->ext[SPACE_EXT_UNWIND]. */
struct unwind_mod {
	Dwarf_CFI *eh; /* from .eh_frame; ours to dwarf_cfi_end */
	Dwarf *dw;     /* for .debug_frame; its CFI dies with it */
	Dwarf_CFI *dbg;
	bool dbg_tried;
	bool go_tried, go_ok;
	struct gopclntab go; /* Go's table: SP deltas where Go emits no CFI */
};

/* Registers of the frame being unwound. */
struct regs {
	uint64_t pc, sp, bp;
	bool bp_ok;
};

/* The sample's stack copy, and the interrupted stack's (sample.h). */
struct mem {
	const uint8_t *buf, *buf2;
	uint64_t base, size, base2, size2;
};

int unwind_new(struct space *s, struct unwind **out)
{
	struct unwind *u;

	if (!s || !out)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->space = s;
	*out = u;
	return 0;
}

void unwind_free(struct unwind *u)
{
	if (u)
		lunwind_free(u->lu);
	free(u);
}

void unwind_set_fallback(struct unwind *u, bool on)
{
	u->no_fallback = !on;
}

void unwind_set_stub(struct unwind *u, unwind_stub_fn fn, void *ctx)
{
	u->stub = fn;
	u->stub_ctx = ctx;
}

int unwind_sample_libunwind(struct unwind *u, const struct sample *smp, uint64_t *pcs, int max,
			    int *n, bool *complete)
{
	if (!u->lu && lunwind_new(u->space, &u->lu) != 0)
		return -ENOMEM;
	return lunwind_sample(u->lu, smp, pcs, max, n, complete);
}

const struct unwind_stats *unwind_get_stats(const struct unwind *u)
{
	return &u->stats;
}

/* ---- filling a rule from libdw ------------------------------------------ */

static void unwind_mod_free(void *p)
{
	struct unwind_mod *um = p;

	if (um->eh)
		dwarf_cfi_end(um->eh);
	if (um->dw)
		dwarf_end(um->dw);
	free(um);
}

static struct unwind_mod *unwind_mod_get(struct module *m)
{
	struct unwind_mod *um = m->ext[SPACE_EXT_UNWIND];

	if (um)
		return um;
	um = calloc(1, sizeof(*um));
	if (!um)
		return NULL;
	space_module_fill(m); /* its CFI is read on first use */
	um->eh = dwarf_getcfi_elf(m->elf);
	m->ext[SPACE_EXT_UNWIND] = um;
	m->ext_free[SPACE_EXT_UNWIND] = unwind_mod_free;
	return um;
}

/* .debug_frame is opened only when .eh_frame lacks the pc: most binaries
 * never need it, and dwarf_begin_elf reads all of .debug_*'s headers. */
static Dwarf_CFI *unwind_mod_debug_frame(struct unwind_mod *um, Elf *elf)
{
	if (!um->dbg_tried) {
		um->dbg_tried = true;
		um->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (um->dw)
			um->dbg = dwarf_getcfi(um->dw);
	}
	return um->dbg;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* DW_OP_bregN / DW_OP_bregx → (reg, off). */
static bool op_breg(const Dwarf_Op *op, uint8_t *reg, int32_t *off)
{
	uint64_t r;
	int64_t o;

	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		r = op->atom - DW_OP_breg0;
		o = (int64_t)op->number;
	} else if (op->atom == DW_OP_bregx) {
		r = op->number;
		o = (int64_t)op->number2;
	} else {
		return false;
	}
	if (r >= SAMPLE_NREGS || !fits32(o))
		return false;
	*reg = (uint8_t)r;
	*off = (int32_t)o;
	return true;
}

/* The .plt FDE: breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus. */
static bool cfa_is_plt(const Dwarf_Op *ops, size_t n, int32_t *threshold)
{
	if (n != 9 || ops[0].atom != DW_OP_breg7 || ops[0].number != 8 ||
	    ops[1].atom != DW_OP_breg16 || ops[1].number != 0 || ops[2].atom != DW_OP_lit15 ||
	    ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31 ||
	    ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return false;
	*threshold = ops[4].atom - DW_OP_lit0;
	return true;
}

static bool decode_cfa(Dwarf_Frame *fr, struct rule *r)
{
	Dwarf_Op *ops;
	size_t n;

	if (dwarf_frame_cfa(fr, &ops, &n) != 0 || n == 0)
		return false;
	if (n == 1 && op_breg(&ops[0], &r->cfa_reg, &r->cfa_off)) {
		r->cfa_kind = CFA_REG;
		return true;
	}
	if (n == 2 && ops[1].atom == DW_OP_deref && op_breg(&ops[0], &r->cfa_reg, &r->cfa_off)) {
		r->cfa_kind = CFA_DEREF;
		return true;
	}
	if (cfa_is_plt(ops, n, &r->cfa_off)) {
		r->cfa_kind = CFA_PLT;
		r->cfa_reg = SAMPLE_REG_RSP;
		return true;
	}
	return false;
}

/* One register's rule, from dwarf_frame_register's location description. */
static bool decode_loc(Dwarf_Frame *fr, int regno, struct loc *l)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	bool value = false;
	int64_t off = 0;

	if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0)
		return false;
	if (n == 0) {
		l->kind = ops == NULL ? LOC_SAME : LOC_UNDEF;
		return true;
	}
	if (ops[n - 1].atom == DW_OP_stack_value) {
		value = true;
		n--;
	}
	if (n == 0 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (n == 1) {
		off = 0;
	} else if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		off = (int64_t)ops[1].number; /* negative offsets arrive wrapped */
	} else if (n == 2 && !value && op_breg(&ops[1], &l->reg, &l->off)) {
		/* An expression rule: the pushed CFA is dead, the breg is the
		 * address (glibc's __restore_rt: breg7 + offsetof(ucontext)). */
		if (l->reg != SAMPLE_REG_RSP && l->reg != SAMPLE_REG_RBP)
			return false;
		l->kind = LOC_AT_REG;
		return true;
	} else {
		return false;
	}
	if (!fits32(off))
		return false;
	l->kind = value ? LOC_VAL_CFA : LOC_AT_CFA;
	l->off = (int32_t)off;
	return true;
}

/* The frame's rule from one CFI, or -ENOENT when it has no FDE for pc. */
static int rule_from_cfi(Dwarf_CFI *cfi, uint64_t elf_pc, struct rule *r)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr start, end;
	bool signal = false;
	int ra_reg;

	if (!cfi || dwarf_cfi_addrframe(cfi, elf_pc, &fr) != 0)
		return -ENOENT;
	ra_reg = dwarf_frame_info(fr, &start, &end, &signal);
	r->kind = RULE_COMPLEX;
	r->signal = signal;
	r->uctx = signal;
	if (ra_reg != REG_RA || !decode_loc(fr, REG_RA, &r->ra))
		goto out;
	if (r->ra.kind == LOC_UNDEF) {
		r->kind = RULE_OUTERMOST;
		goto out;
	}
	if (r->ra.kind == LOC_SAME || !decode_cfa(fr, r))
		goto out;
	if (!decode_loc(fr, SAMPLE_REG_RBP, &r->bp))
		goto out;
	r->kind = RULE_CFI;
out:
	free(fr);
	return 0;
}

/* ---- Go code: the pclntab's SP deltas ----------------------------------- */

/* Go's signal return stub (the restorer sigaction names): the kernel's
 * signal frame "returns" to it, its rsp at the ucontext. */
static bool go_sigreturn(const char *name)
{
	return !strcmp(name, "runtime.sigreturn") || !strcmp(name, "runtime.sigreturn__sigaction");
}

/* rsp at the restorer points at the ucontext (the return popped the
 * restorer's address): uc_mcontext at 40, and in its gregs rbp is 10th,
 * rsp 15th and rip 16th (x86-64 Linux). */
static void rule_signal(struct rule *r)
{
	r->kind = RULE_CFI;
	r->signal = true;
	r->uctx = true;
	r->cfa_kind = CFA_DEREF;
	r->cfa_reg = SAMPLE_REG_RSP;
	r->cfa_off = 40 + 15 * 8;
	r->ra = (struct loc){LOC_AT_REG, SAMPLE_REG_RSP, 40 + 16 * 8};
	r->bp = (struct loc){LOC_AT_REG, SAMPLE_REG_RSP, 40 + 10 * 8};
}

/* Go emits no .eh_frame (and -w drops .debug_frame): its function table's
 * pcsp says how far each pc is below its function's entry SP, where the
 * return address lies; the frame pointer, when the function has a frame,
 * is saved just below it (Go's amd64 prologue). Its stack starts (goexit,
 * mstart, systemstack...) end the walk, cleanly. False: not Go code. */
static bool go_table(struct unwind_mod *um, Elf *elf)
{
	if (!um->go_tried) {
		um->go_tried = true;
		um->go_ok = gopclntab_read(elf, &um->go) == 0;
	}
	return um->go_ok;
}

static bool rule_from_go(struct unwind_mod *um, Elf *elf, uint64_t elf_pc, struct rule *r)
{
	struct gopclntab_func f;
	int32_t d;

	if (!go_table(um, elf))
		return false;
	/* A caller is looked up at ra - 1; the kernel's return address for
	 * a handler is the restorer's first byte. */
	if ((gopclntab_find(&um->go, elf_pc + 1, &f) == 0 && f.entry == elf_pc + 1 &&
	     go_sigreturn(f.name)) ||
	    (gopclntab_find(&um->go, elf_pc, &f) == 0 && go_sigreturn(f.name))) {
		rule_signal(r);
		return true;
	}
	if (gopclntab_find(&um->go, elf_pc, &f))
		return false;
	if (gopclntab_is_stack_top(f.name)) {
		r->kind = RULE_OUTERMOST;
		return true;
	}
	if (gopclntab_sp_delta(&um->go, &f, elf_pc, &d) || d > (1 << 24))
		return false;
	r->kind = RULE_CFI;
	r->cfa_kind = CFA_REG;
	r->cfa_reg = SAMPLE_REG_RSP;
	r->cfa_off = d + 8;
	r->ra = (struct loc){LOC_AT_CFA, 0, -8};
	r->bp = d >= 16 ? (struct loc){LOC_AT_CFA, 0, -16} : (struct loc){LOC_SAME, 0, 0};
	/* The handler's return address is the restorer's first byte, not a
	 * call's end: its caller is looked up there, not one byte before (in
	 * the function before it). */
	r->signal = !strcmp(f.name, "runtime.sigtramp") || !strcmp(f.name, "runtime.cgoSigtramp");
	return true;
}

/* Code the stub hook knows: CFA = rsp + off, rbp kept or saved. */
static bool rule_from_stub(struct unwind *u, uint64_t pc, struct rule *r)
{
	struct unwind_stub st;

	if (!u->stub || !u->stub(u->stub_ctx, pc, &st) || st.cfa_off < 16 || st.cfa_off % 8)
		return false;
	r->kind = RULE_CFI;
	r->cfa_kind = CFA_REG;
	r->cfa_reg = SAMPLE_REG_RSP;
	r->cfa_off = st.cfa_off;
	r->ra = (struct loc){.kind = LOC_AT_CFA, .off = -8};
	r->bp = st.bp_off ? (struct loc){.kind = LOC_AT_CFA, .off = st.bp_off}
			  : (struct loc){.kind = LOC_SAME};
	return true;
}

/* Build the rule for a pc on a cache miss. */
static void rule_fill(struct unwind *u, uint64_t pc, struct rule *r)
{
	const struct mapping *mp = space_find(u->space, pc);
	struct unwind_mod *um;
	uint64_t elf_pc;

	memset(r, 0, sizeof(*r));
	r->kind = RULE_NOCFI;
	r->unmapped = !mp;
	if (mp && (!mp->mod || !mp->mod->elf) && rule_from_stub(u, pc, r))
		return;
	if (!mp || !mp->mod || !mp->mod->elf)
		return;
	um = unwind_mod_get(mp->mod);
	if (!um)
		return;
	elf_pc = pc - mp->bias;
	if (rule_from_cfi(um->eh, elf_pc, r) == 0)
		return;
	if (rule_from_cfi(unwind_mod_debug_frame(um, mp->mod->elf), elf_pc, r) == 0)
		return;
	memset(r, 0, sizeof(*r));
	if (rule_from_go(um, mp->mod->elf, elf_pc, r))
		return;
	r->kind = RULE_NOCFI;
}

static const struct rule *rule_get(struct unwind *u, uint64_t pc)
{
	struct slot *sl = &u->cache[(pc * 0x9e3779b97f4a7c15ULL) >> (64 - CACHE_BITS)];
	unsigned gen = u->space->generation;

	if (sl->r.kind != RULE_EMPTY && sl->pc == pc && sl->gen == gen) {
		u->stats.cache_hits++;
		return &sl->r;
	}
	u->stats.cache_misses++;
	rule_fill(u, pc, &sl->r);
	sl->pc = pc;
	sl->gen = gen;
	return &sl->r;
}

/* ---- the walk ----------------------------------------------------------- */

static bool region_read(const uint8_t *buf, uint64_t base, uint64_t size, uint64_t addr,
			uint64_t *v)
{
	uint64_t off = addr - base; /* wraps to huge when addr < base */

	if (!buf || off > size || size - off < 8)
		return false;
	memcpy(v, buf + off, sizeof(*v));
	return true;
}

static bool mem_read(const struct mem *m, uint64_t addr, uint64_t *v)
{
	return region_read(m->buf, m->base, m->size, addr, v) ||
	       region_read(m->buf2, m->base2, m->size2, addr, v);
}

/* Value of a CFA base register in the current frame. Only rsp and rbp are
 * tracked above frame 0; frame 0 has the full sampled register set. */
static bool reg_value(const struct regs *rg, const struct sample *smp, bool leaf, uint8_t reg,
		      uint64_t *v)
{
	if (reg == SAMPLE_REG_RSP) {
		*v = rg->sp;
		return true;
	}
	if (reg == SAMPLE_REG_RBP && rg->bp_ok) {
		*v = rg->bp;
		return true;
	}
	if (leaf && reg != SAMPLE_REG_RBP && (smp->regs_mask >> reg & 1)) {
		*v = smp->regs[reg];
		return true;
	}
	return false;
}

static bool rule_cfa(const struct rule *r, const struct regs *rg, const struct sample *smp,
		     bool leaf, const struct mem *m, uint64_t *cfa)
{
	uint64_t base;

	if (r->cfa_kind == CFA_PLT) {
		*cfa = rg->sp + 8 + ((int32_t)(rg->pc & 15) >= r->cfa_off ? 8 : 0);
		return true;
	}
	if (!reg_value(rg, smp, leaf, r->cfa_reg, &base))
		return false;
	base += (uint64_t)(int64_t)r->cfa_off;
	if (r->cfa_kind == CFA_DEREF)
		return mem_read(m, base, cfa);
	*cfa = base;
	return true;
}

/* Evaluate a RA/rbp rule. *ok false means unrecoverable (undefined). */
static bool loc_value(const struct loc *l, uint64_t cfa, const struct regs *rg, uint64_t cur,
		      bool cur_ok, const struct mem *m, uint64_t *v, bool *ok)
{
	uint64_t off = (uint64_t)(int64_t)l->off;

	*ok = true;
	switch (l->kind) {
	case LOC_SAME:
		*v = cur;
		*ok = cur_ok;
		return true;
	case LOC_UNDEF:
		*ok = false;
		return true;
	case LOC_AT_CFA:
		return mem_read(m, cfa + off, v);
	case LOC_VAL_CFA:
		*v = cfa + off;
		return true;
	case LOC_AT_REG:
		if (l->reg == SAMPLE_REG_RSP)
			return mem_read(m, rg->sp + off, v);
		if (!rg->bp_ok)
			return false;
		return mem_read(m, rg->bp + off, v);
	}
	return false;
}

/* In the leaf, a register "saved" below the sampled rsp was popped
 * already: gcc's epilogues move the CFA on after each pop but do not mark
 * the register restored, so between `pop %rbp` and `ret` the rule still
 * points at a slot the copy (which starts at rsp) does not hold, while the
 * register itself holds the caller's value. */
static bool popped(const struct loc *l, uint64_t cfa, const struct regs *rg, const struct mem *m)
{
	uint64_t off = (uint64_t)(int64_t)l->off, addr;

	if (l->kind == LOC_AT_CFA)
		addr = cfa + off;
	else if (l->kind == LOC_AT_REG && l->reg == SAMPLE_REG_RSP)
		addr = rg->sp + off;
	else
		return false;
	return addr < m->base && m->base - addr <= 128; /* within the red zone */
}

enum step {
	STEP_OK,
	STEP_END,   /* outermost frame or RA 0: a complete stack */
	STEP_TRUNC, /* cannot go on: data missing (outside the copy) or garbage */
	STEP_RULE,  /* cannot go on: a rule the cache does not model (libunwind's turn) */
};

/* Frame-pointer step for code without CFI. */
static enum step step_fp(struct regs *rg, const struct mem *m, uint64_t *ra)
{
	uint64_t next_bp;

	if (!rg->bp_ok || rg->bp < rg->sp)
		return STEP_TRUNC;
	if (!mem_read(m, rg->bp, &next_bp) || !mem_read(m, rg->bp + 8, ra))
		return STEP_TRUNC;
	if (*ra == 0)
		return STEP_END;
	rg->sp = rg->bp + 16;
	rg->bp = next_bp;
	return STEP_OK;
}

static bool lost_bp(const struct loc *l, const struct regs *rg)
{
	return l->kind == LOC_AT_REG && l->reg == SAMPLE_REG_RBP && !rg->bp_ok;
}

/* One CFI step: rg becomes the caller's registers, *ra its pc. */
static enum step step_cfi(const struct rule *r, struct regs *rg, const struct sample *smp,
			  bool leaf, const struct mem *m, uint64_t *ra)
{
	uint64_t cfa, bp;
	bool ra_ok, bp_ok;

	/* Above the leaf only rsp and rbp are tracked: a CFA or a slot based
	 * on another register, or on an rbp an earlier rule lost, is a rule
	 * the cache cannot evaluate here, not missing data. */
	if ((r->cfa_kind != CFA_PLT && !reg_value(rg, smp, leaf, r->cfa_reg, &cfa)) ||
	    lost_bp(&r->ra, rg) || lost_bp(&r->bp, rg))
		return STEP_RULE;
	if (!rule_cfa(r, rg, smp, leaf, m, &cfa))
		return STEP_TRUNC;
	/* The stack grows down: a caller's frame lies above. A signal
	 * frame may come from another stack (sigaltstack), so it is exempt;
	 * the frame limit still bounds the walk. */
	if (cfa <= rg->sp && !r->signal)
		return STEP_TRUNC;
	if (!loc_value(&r->ra, cfa, rg, 0, false, m, ra, &ra_ok) || !ra_ok)
		return STEP_TRUNC;
	if (!loc_value(&r->bp, cfa, rg, rg->bp, rg->bp_ok, m, &bp, &bp_ok)) {
		if (!leaf || !popped(&r->bp, cfa, rg, m))
			return STEP_TRUNC;
		bp = rg->bp;
		bp_ok = rg->bp_ok;
	}
	if (*ra == 0)
		return STEP_END;
	rg->sp = cfa;
	rg->bp = bp;
	rg->bp_ok = bp_ok;
	return STEP_OK;
}

/* ---- past a Go signal frame: the kernel's frame-pointer walk ----------- */

/* A Go thread caught in its signal handler (SIGURG preempting a busy
 * goroutine, SIGPROF) runs on its signal stack: the copy holds the handler
 * and the signal frame, whose ucontext names the interrupted pc exactly,
 * but not the goroutine's stack. perf's user callchain, walked by the
 * kernel at the sample, follows rbp from the handler's frames into the
 * goroutine (Go's sigtramp makes no frame record: the handler's outermost
 * record holds the interrupted rbp). Its entries are taken only where they
 * are the callers for certain:
 *  - the kernel's walk is replayed through the copy up to the record at
 *    the interrupted rbp, each return address equal to the callchain's;
 *  - the interrupted function has its record in place: rbp is at CFA - 16
 *    by its pcsp delta. A leaf without a frame, or one in its prologue or
 *    epilogue, has its return address at rsp, which the callchain does not
 *    hold: the walk stays truncated;
 *  - each caller so found is compiled Go (a .go file) with a frame at its
 *    call (pcsp delta >= 8), so the next record is its own; an assembly or
 *    frameless one is named and ends the walk, truncated; a stack start
 *    (goexit...) ends it cleanly. */
struct go_pc {
	struct gopclntab_func f;
	int32_t d;    /* pcsp delta at the pc, -1 unknown */
	bool go_file; /* the pc's file is Go source, not assembly */
};

static bool go_pc(struct unwind *u, uint64_t pc, struct go_pc *g)
{
	const struct mapping *mp = space_find(u->space, pc);
	struct unwind_mod *um;
	const char *file = NULL;
	size_t len;
	int line;

	if (!mp || !mp->mod || !mp->mod->elf || !(um = unwind_mod_get(mp->mod)) ||
	    !go_table(um, mp->mod->elf) || gopclntab_find(&um->go, pc - mp->bias, &g->f))
		return false;
	if (gopclntab_sp_delta(&um->go, &g->f, pc - mp->bias, &g->d))
		g->d = -1;
	if (gopclntab_line(&um->go, &g->f, pc - mp->bias, &file, &line))
		file = NULL;
	len = file ? strlen(file) : 0;
	g->go_file = len > 3 && !strcmp(file + len - 3, ".go");
	return true;
}

/* The index in fpcs of the return address the kernel's walk read from the
 * record at bp, replayed through the copy; -1 when it cannot be. */
static int fp_index(const struct sample *smp, const struct mem *m, uint64_t bp)
{
	uint64_t fp = smp->regs[SAMPLE_REG_RBP], next, ret;

	if (!(smp->regs_mask >> SAMPLE_REG_RBP & 1))
		return -1;
	for (int j = 1; j < smp->nfpcs; j++) {
		if (fp == bp)
			return j;
		if (!mem_read(m, fp, &next) || !mem_read(m, fp + 8, &ret) || ret != smp->fpcs[j])
			return -1;
		fp = next;
	}
	return -1;
}

/* rg: the interrupted frame's registers, its pc pcs[*k - 1]. STEP_END when
 * a stack start was reached, else STEP_TRUNC. */
static enum step go_signal_splice(struct unwind *u, const struct sample *smp, const struct regs *rg,
				  const struct mem *m, uint64_t *pcs, int max, int *k)
{
	struct go_pc g;
	int j;

	if (!smp->fpcs || !rg->bp_ok || !go_pc(u, rg->pc, &g) || g.d < 8 ||
	    rg->bp != rg->sp + (uint64_t)g.d - 8 || (j = fp_index(smp, m, rg->bp)) < 0)
		return STEP_TRUNC;
	for (; j < smp->nfpcs && *k < max; j++) {
		uint64_t ra = smp->fpcs[j];

		if (ra == 0 || !go_pc(u, ra - 1, &g))
			return STEP_TRUNC;
		pcs[(*k)++] = ra - 1;
		if (gopclntab_is_stack_top(g.f.name))
			return STEP_END;
		if (!g.go_file || g.d < 8)
			return STEP_TRUNC;
	}
	return STEP_TRUNC;
}

static int copy_ready_pcs(struct unwind *u, const struct sample *smp, uint64_t *pcs, int max,
			  int *n, unsigned *flags)
{
	int k = smp->nupcs < max ? smp->nupcs : max;

	memcpy(pcs, smp->upcs, (size_t)k * sizeof(*pcs));
	*n = k;
	*flags = k < smp->nupcs ? UNWIND_TRUNCATED : 0;
	u->stats.samples++;
	u->stats.frames += (uint64_t)k;
	return 0;
}

/* The cache stopped after k frames: libunwind walks the sample from the
 * leaf; when its first k frames are ours, its further ones continue the
 * stack. True when that reached the outermost frame. */
static bool fallback(struct unwind *u, const struct sample *smp, uint64_t *pcs, int max, int *k)
{
	uint64_t lpcs[UNWIND_MAX_FRAMES];
	bool complete;
	int ln;

	if (max > UNWIND_MAX_FRAMES)
		max = UNWIND_MAX_FRAMES;
	u->stats.fallback_tried++;
	if (unwind_sample_libunwind(u, smp, lpcs, max, &ln, &complete) != 0)
		return false;
	if (ln <= *k || memcmp(lpcs, pcs, (size_t)*k * sizeof(*pcs)) != 0)
		return false;
	memcpy(pcs + *k, lpcs + *k, (size_t)(ln - *k) * sizeof(*pcs));
	u->stats.fallback_continued++;
	u->stats.fallback_frames += (uint64_t)(ln - *k);
	*k = ln;
	return complete;
}

int unwind_sample(struct unwind *u, const struct sample *smp, uint64_t *pcs, int max, int *n,
		  unsigned *flags)
{
	const uint32_t need = 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RIP;
	struct mem m;
	struct regs rg;
	uint64_t lookup;
	unsigned fl = 0;
	int k = 0;
	enum step st = STEP_OK;
	/* uctx: the last step restored a ucontext; interrupted: this frame
	 * is the code a signal interrupted (its registers from one) */
	bool uctx = false, interrupted = false;

	if (!u || !smp || !pcs || max <= 0 || !n || !flags)
		return -EINVAL;
	if ((smp->regs_mask & need) != need) {
		if (smp->upcs && smp->nupcs > 0)
			return copy_ready_pcs(u, smp, pcs, max, n, flags);
		return -EINVAL;
	}
	m.buf = smp->stack;
	m.base = smp->regs[SAMPLE_REG_RSP];
	m.size = smp->stack ? smp->stack_size : 0;
	m.buf2 = smp->stack2;
	m.base2 = smp->stack2_base;
	m.size2 = smp->stack2 ? smp->stack2_size : 0;
	rg.pc = smp->regs[SAMPLE_REG_RIP];
	rg.sp = smp->regs[SAMPLE_REG_RSP];
	rg.bp = smp->regs[SAMPLE_REG_RBP];
	rg.bp_ok = smp->regs_mask >> SAMPLE_REG_RBP & 1;
	lookup = rg.pc;
	pcs[k++] = rg.pc;

	while (k < max) {
		const struct rule *r = rule_get(u, lookup);
		bool signal = false;
		uint64_t ra = 0;

		interrupted = uctx;
		uctx = false;

		if (k == 1 && r->unmapped)
			fl |= UNWIND_UNMAPPED;
		switch (r->kind) {
		case RULE_CFI:
			st = step_cfi(r, &rg, smp, k == 1, &m, &ra);
			signal = r->signal;
			uctx = r->uctx;
			break;
		case RULE_NOCFI:
			fl |= UNWIND_NO_CFI;
			st = step_fp(&rg, &m, &ra);
			break;
		case RULE_OUTERMOST:
			st = STEP_END;
			break;
		default: /* RULE_COMPLEX */
			st = STEP_RULE;
			break;
		}
		if (st != STEP_OK)
			break;
		rg.pc = ra;
		lookup = signal ? ra : ra - 1;
		pcs[k++] = lookup;
	}
	if (st == STEP_TRUNC && interrupted)
		st = go_signal_splice(u, smp, &rg, &m, pcs, max, &k);
	if (st == STEP_OK) /* the frame limit, not the end of the stack */
		fl |= UNWIND_TRUNCATED;
	if (st == STEP_TRUNC || st == STEP_RULE)
		u->stats.fast_truncated++;
	if (st == STEP_RULE) {
		/* Exactly where the cache stopped on a rule: data missing from
		 * the copy would stop libunwind as well. */
		int before = k;

		fl |= UNWIND_CACHE_STOPPED;
		st = !u->no_fallback && fallback(u, smp, pcs, max, &k) ? STEP_END : STEP_TRUNC;
		if (k > before)
			fl |= UNWIND_LIBUNWIND;
	}
	if (st == STEP_TRUNC) {
		fl |= UNWIND_TRUNCATED;
		if (k == 1)
			fl |= UNWIND_FAILED;
	}
	*n = k;
	*flags = fl;
	u->stats.samples++;
	u->stats.frames += (uint64_t)k;
	if (fl & UNWIND_TRUNCATED)
		u->stats.truncated++;
	if (fl & UNWIND_FAILED)
		u->stats.failed++;
	return 0;
}
