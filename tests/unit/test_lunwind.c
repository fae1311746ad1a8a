/*
 * test_lunwind — the three unwinders on the same recorded samples: the rule
 * cache alone (unwind.c without its fallback), libunwind's remote API
 * (lunwind.c) and libdw (dwfl_getthread_frames over the same registers and
 * stack copy), plus what stacktop uses (the cache, continued by libunwind
 * where it stops). The samples are captures of this process (capture.h):
 * a plain call chain, a chain through libc's qsort, a realigned (DRAP)
 * frame, a signal frame, and oddcfi.h's two functions whose CFI the cache
 * does not model. A table of where the walks differ is printed; the checks:
 * all agree on the ordinary samples, and on the odd one the cache alone
 * stops at oddcfi_rbx while the other three reach this test and main.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <execinfo.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/unwind/lunwind.h"
#include "stacktop/unwind/space.h"
#include "stacktop/unwind/unwind.h"
#include "helpers.h"
#include "capture.h"
#include "../targets/oddcfi.h"

static struct space space;
static volatile int sink;

/* ---- the samples ---------------------------------------------------------- */

__attribute__((noipa)) static void lu_chain(void)
{
	sink += unw_a(3);
	sink++;
}

static int cmp_done;

__attribute__((noipa)) static int lu_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (!cmp_done) {
		cmp_done = 1;
		CAPTURE(COPY_MAX);
	}
	return (a > b) - (a < b);
}

__attribute__((noipa)) static void lu_qsort(void)
{
	int v[16];

	for (int i = 0; i < 16; i++)
		v[i] = (i * 7919) % 16;
	cmp_done = 0;
	qsort(v, 16, sizeof(v[0]), lu_cmp);
	sink += v[0];
}

__attribute__((noipa)) static void lu_drap(int x)
{
	char vla[x];
	int v __attribute__((aligned(64))) = x;
	volatile int *p = &v;

	memset(vla, 1, (size_t)x);
	sink += unw_c(*p + vla[0]);
	sink++;
}

__attribute__((noipa)) static void lu_handler(int sig)
{
	CAPTURE(COPY_MAX);
	sink += sig;
}

__attribute__((noipa)) static void lu_signal(void)
{
	struct sigaction sa = {0}, old;

	sa.sa_handler = lu_handler;
	sigaction(SIGUSR1, &sa, &old);
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
	sink++;
}

__attribute__((noipa)) static uint64_t lu_odd_leaf(uint64_t x)
{
	CAPTURE(COPY_MAX);
	return x + 1;
}

__attribute__((noipa)) static void lu_odd(void)
{
	sink += (int)oddcfi_expr(7, lu_odd_leaf);
	sink++;
}

enum { S_CHAIN, S_QSORT, S_DRAP, S_SIGNAL, S_ODD, S_COUNT };
static const char *const sample_name[S_COUNT] = {"chain", "qsort", "drap", "signal", "oddcfi"};
static struct capture *caps[S_COUNT];

static void record_all(void)
{
	void (*make[S_COUNT])(void) = {lu_chain, lu_qsort, NULL, lu_signal, lu_odd};

	for (int i = 0; i < S_COUNT; i++) {
		if (i == S_DRAP)
			lu_drap(9);
		else
			make[i]();
		caps[i] = malloc(sizeof(cap));
		memcpy(caps[i], &cap, sizeof(cap));
	}
}

static void sample_of(int i, struct sample *smp)
{
	memcpy(&cap, caps[i], sizeof(cap));
	make_sample(smp, cap.size);
}

/* ---- libdw over the same sample ------------------------------------------- */

struct dw_walk {
	const struct sample *smp;
	uint64_t *pcs;
	int n, max;
};

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return getpid();
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct sample *s = ((struct dw_walk *)arg)->smp;
	uint64_t off = addr - s->regs[SAMPLE_REG_RSP];

	if (off >= s->stack_size || s->stack_size - off < 8)
		return false;
	memcpy(result, s->stack + off, 8);
	return true;
}

static bool dw_set_regs(Dwfl_Thread *thread, void *arg)
{
	const struct sample *s = ((struct dw_walk *)arg)->smp;

	for (int r = 0; r < SAMPLE_REG_RIP; r++) {
		Dwarf_Word v = s->regs[r];

		if ((s->regs_mask >> r & 1) && !dwfl_thread_state_registers(thread, r, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, s->regs[SAMPLE_REG_RIP]);
	return true;
}

static const Dwfl_Thread_Callbacks dw_callbacks = {
    .next_thread = dw_next_thread,
    .memory_read = dw_memory_read,
    .set_initial_registers = dw_set_regs,
};

static int dw_frame(Dwfl_Frame *fr, void *arg)
{
	struct dw_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(fr, &pc, &activation) || w->n >= w->max)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = activation ? pc : pc - 1;
	return DWARF_CB_OK;
}

/* libdw's walk of smp: a Dwfl over this process's modules, its registers
 * and memory from the sample only. */
static int libdw_walk(const struct sample *smp, uint64_t *pcs, int max)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
	    .find_elf = dwfl_linux_proc_find_elf,
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	    .debuginfo_path = &debuginfo_path,
	};
	struct dw_walk w = {.smp = smp, .pcs = pcs, .max = max};
	Dwfl *dwfl = dwfl_begin(&cb);

	assert_non_null(dwfl);
	assert_int_equal(dwfl_linux_proc_report(dwfl, getpid()), 0);
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	assert_true(dwfl_attach_state(dwfl, NULL, getpid(), &dw_callbacks, &w));
	dwfl_getthread_frames(dwfl, getpid(), dw_frame, &w);
	dwfl_end(dwfl);
	return w.n;
}

/* ---- helpers -------------------------------------------------------------- */

static const char *self_name(uint64_t pc)
{
	static const char *const names[] = {"oddcfi_rbx",   "oddcfi_expr", "lu_odd",
					    "test_compare", "main",	   "lu_odd_leaf"};
	const struct mapping *m = space_find(&space, (uint64_t)(uintptr_t)&lu_odd);

	for (size_t i = 0; m && m->mod && i < sizeof(names) / sizeof(names[0]); i++) {
		GElf_Sym sym;

		if (elf_find_symbol(m->mod->elf, SHT_SYMTAB, STT_FUNC, names[i], &sym))
			continue;
		if (pc - m->bias >= sym.st_value && pc - m->bias < sym.st_value + sym.st_size)
			return names[i];
	}
	return "?";
}

/* The first frame where two walks differ (-1: none). A pc one byte apart
 * is the same frame: libdw reports the frame right after a signal handler
 * (__restore_rt, whose FDE starts a byte early for this) at its exact
 * return address, libunwind and the cache at return address - 1. */
static int first_diff(const uint64_t *a, int na, const uint64_t *b, int nb)
{
	int i;

	for (i = 0; i < na && i < nb; i++)
		if (a[i] != b[i] && a[i] + 1 != b[i] && a[i] != b[i] + 1)
			return i;
	return na == nb ? -1 : i;
}

static const char *diff_text(int d, const uint64_t *a, int na, const uint64_t *b, int nb)
{
	static char buf[4][96];
	static int k;
	char *s = buf[k++ & 3];

	if (d < 0)
		snprintf(s, 96, "same");
	else
		snprintf(s, 96, "from frame %d (%#lx vs %#lx)", d,
			 d < na ? (unsigned long)a[d] : 0UL, d < nb ? (unsigned long)b[d] : 0UL);
	return s;
}

static int setup(void **state)
{
	void *warm[4];

	backtrace(warm, 4);
	cap_space = &space;
	if (space_load(&space, getpid()) != 0)
		return -1;
	record_all();
	return 0;
}

static int teardown(void **state)
{
	for (int i = 0; i < S_COUNT; i++)
		free(caps[i]);
	space_release(&space);
	return 0;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_compare(void **state)
{
	uint64_t fast[UNWIND_MAX_FRAMES], both[UNWIND_MAX_FRAMES], lu[UNWIND_MAX_FRAMES],
	    dw[UNWIND_MAX_FRAMES];
	struct unwind *uf, *ub;
	struct sample smp;

	assert_int_equal(unwind_new(&space, &uf), 0);
	assert_int_equal(unwind_new(&space, &ub), 0);
	unwind_set_fallback(uf, false);
	print_message("%-7s %6s %6s %9s %6s  where they differ\n", "sample", "cache", "+lu",
		      "libunwind", "libdw");
	for (int i = 0; i < S_COUNT; i++) {
		unsigned ff, fb;
		int nf, nb, nl, nd, d1, d2, d3;
		bool complete;

		sample_of(i, &smp);
		assert_int_equal(unwind_sample(uf, &smp, fast, UNWIND_MAX_FRAMES, &nf, &ff), 0);
		assert_int_equal(unwind_sample(ub, &smp, both, UNWIND_MAX_FRAMES, &nb, &fb), 0);
		assert_int_equal(
		    unwind_sample_libunwind(ub, &smp, lu, UNWIND_MAX_FRAMES, &nl, &complete), 0);
		nd = libdw_walk(&smp, dw, UNWIND_MAX_FRAMES);
		d1 = first_diff(fast, nf, dw, nd);
		d2 = first_diff(lu, nl, dw, nd);
		d3 = first_diff(both, nb, dw, nd);
		print_message("%-7s %6d %6d %9d %6d  cache/libdw %s; libunwind/libdw %s; "
			      "cache+libunwind/libdw %s\n",
			      sample_name[i], nf, nb, nl, nd, diff_text(d1, fast, nf, dw, nd),
			      diff_text(d2, lu, nl, dw, nd), diff_text(d3, both, nb, dw, nd));
		/* libunwind and libdw agree everywhere, to _start. */
		assert_int_equal(d2, -1);
		assert_true(complete);
		/* What stacktop uses agrees with libdw everywhere. */
		assert_int_equal(d3, -1);
		assert_false(fb & UNWIND_TRUNCATED);
		if (i != S_ODD) {
			/* ordinary CFI: the cache alone is enough, no fallback */
			assert_int_equal(d1, -1);
			assert_int_equal(ff, 0);
			assert_int_equal(fb, 0);
			continue;
		}
		/* The cache stops at oddcfi_rbx (CFA = rbx + 16 above the leaf). */
		assert_true(ff & UNWIND_TRUNCATED);
		assert_int_equal(nf, 2);
		assert_string_equal(self_name(fast[0]), "lu_odd_leaf");
		assert_string_equal(self_name(fast[1]), "oddcfi_rbx");
		/* libunwind continues through the CFA expression to main. */
		assert_true(fb & UNWIND_LIBUNWIND);
		assert_string_equal(self_name(both[2]), "oddcfi_expr");
		assert_string_equal(self_name(both[3]), "lu_odd");
		assert_true(nb > 6);
	}
	assert_int_equal(unwind_get_stats(uf)->fast_truncated, 1);
	assert_int_equal(unwind_get_stats(uf)->fallback_tried, 0);
	assert_int_equal(unwind_get_stats(ub)->fast_truncated, 1);
	assert_int_equal(unwind_get_stats(ub)->fallback_continued, 1);
	assert_int_equal(unwind_get_stats(ub)->truncated, 0);
	unwind_free(uf);
	unwind_free(ub);
}

/* A copy cut inside the odd frames: libunwind cannot read further either,
 * so the stack stays truncated (and nothing outside the copy is read); a
 * copy cut in ordinary frames does not call libunwind at all. */
static void test_cut_copy(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind *u;
	struct sample smp;
	unsigned fl;
	int n, full;

	sample_of(S_ODD, &smp);
	assert_int_equal(unwind_new(&space, &u), 0);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &full, &fl), 0);
	smp.stack_size = 64; /* lu_odd_leaf's frame, not the odd frames' */
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &fl), 0);
	assert_true(fl & UNWIND_TRUNCATED);
	assert_true(n >= 1 && n < full - 3);
	assert_int_equal(unwind_get_stats(u)->truncated, 1);
	assert_int_equal(unwind_get_stats(u)->fallback_tried, 2);
	/* An ordinary stack deeper than its copy: data missing, not a rule:
	 * libunwind is not asked (it would stop at the same place, 8 us later). */
	sample_of(S_CHAIN, &smp);
	smp.stack_size = 128;
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &fl), 0);
	assert_true(fl & UNWIND_TRUNCATED);
	assert_false(fl & UNWIND_CACHE_STOPPED);
	assert_int_equal(unwind_get_stats(u)->fallback_tried, 2);
	unwind_free(u);
}

/* A sample without registers beyond rip/rsp: libunwind refuses nothing,
 * reads nothing it was not given. */
static void test_bad_input(void **state)
{
	uint64_t pcs[8];
	struct lunwind *l;
	struct sample smp = {0};
	bool complete;
	int n;

	assert_int_equal(lunwind_new(&space, &l), 0);
	assert_int_equal(lunwind_sample(l, &smp, pcs, 8, &n, &complete), -EINVAL);
	smp.regs_mask = 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RIP;
	smp.regs[SAMPLE_REG_RIP] = 0x1000; /* no mapping */
	smp.regs[SAMPLE_REG_RSP] = 0x2000;
	assert_int_equal(lunwind_sample(l, &smp, pcs, 8, &n, &complete), 0);
	assert_true(n <= 1);
	assert_false(complete);
	lunwind_free(l);
}

/* What a sample costs when the cache stops and libunwind continues, next
 * to the cache alone on an ordinary sample (bench/README.md). */
static void test_speed(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind *u;
	struct sample odd, chain;
	unsigned fl;
	int n, no, iters = 5000;
	double t0, t_odd, t_chain, t_lu;
	bool complete;

	assert_int_equal(unwind_new(&space, &u), 0);
	sample_of(S_CHAIN, &chain);
	struct capture *c1 = malloc(sizeof(cap));
	memcpy(c1, &cap, sizeof(cap));
	chain.stack = c1->stack;
	sample_of(S_ODD, &odd);
	unwind_sample(u, &odd, pcs, UNWIND_MAX_FRAMES, &no, &fl);
	unwind_sample(u, &chain, pcs, UNWIND_MAX_FRAMES, &n, &fl);
	t0 = now_us();
	for (int i = 0; i < iters; i++)
		unwind_sample(u, &chain, pcs, UNWIND_MAX_FRAMES, &n, &fl);
	t_chain = (now_us() - t0) / iters;
	t0 = now_us();
	for (int i = 0; i < iters; i++)
		unwind_sample(u, &odd, pcs, UNWIND_MAX_FRAMES, &no, &fl);
	t_odd = (now_us() - t0) / iters;
	t0 = now_us();
	for (int i = 0; i < iters; i++)
		unwind_sample_libunwind(u, &chain, pcs, UNWIND_MAX_FRAMES, &n, &complete);
	t_lu = (now_us() - t0) / iters;
	print_message("lunwind: cache alone %.2f us/sample (%d frames); cache stopping + libunwind "
		      "%.2f us/sample (%d frames); libunwind alone %.2f us/sample (%d frames)\n",
		      t_chain, n, t_odd, no, t_lu, n);
	assert_true(fl & UNWIND_LIBUNWIND);
	free(c1);
	unwind_free(u);
}

TEST_MAIN(setup, teardown, TEST(test_compare), TEST(test_cut_copy), TEST(test_bad_input),
	  TEST(test_speed))
