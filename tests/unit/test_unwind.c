/*
 * test_unwind — in-process self-unwinding. A leaf captures rip/rsp/rbp with
 * inline asm and copies its stack, exactly what a perf sample carries; the
 * unwinder must find the callers, which are checked two ways: against the
 * symbol table of this binary (function ranges) and against glibc's
 * backtrace() (libgcc's unwinder) taken at the same point. This binary is
 * built -O2 without frame pointers, so only CFI can get this right.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <setjmp.h>
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

#include "stacktop/elf/gopclntab.h"
#include "stacktop/unwind/space.h"
#include "stacktop/unwind/unwind.h"
#include "helpers.h"
#include "capture.h"

static struct space space;
static volatile int sink;

__attribute__((noipa)) void unw_chain_caller(void)
{
	sink += unw_a(5);
	sink++;
}

/* A VLA plus an over-aligned local makes gcc realign the stack through a
 * "DRAP" register: CFA = *(rbp - 8), rbp saved at [rbp]. */
__attribute__((noipa)) int unw_drap(int x)
{
	char vla[x];
	int v __attribute__((aligned(64))) = x;
	volatile int *p = &v;
	int r;

	memset(vla, 1, (size_t)x);
	r = unw_c(*p + vla[0]);
	sink += r;
	return r + *p;
}

__attribute__((noipa)) void unw_handler(int sig)
{
	CAPTURE(COPY_MAX);
	sink += sig;
}

__attribute__((noipa)) void unw_signal_caller(void)
{
	raise(SIGUSR1);
	sink++;
}

/* A handler on an alternate stack, as Go's always are: the capture (from
 * the handler's sp up) holds the signal frame but not the interrupted
 * stack, which is copied as a sampler that stopped the thread would: from
 * the ucontext's rsp. The alternate stack is static, in a mapping the
 * space knows. */
static uint8_t unw_altstack[64 * 1024] __attribute__((aligned(64)));
static uint8_t unw_interrupted[COPY_MAX];
static uint64_t unw_isp, unw_isize;

__attribute__((noipa)) void unw_alt_handler(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;
	const struct mapping *m;

	CAPTURE(COPY_MAX);
	unw_isp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	m = space_find(cap_space, unw_isp);
	unw_isize = m ? m->end - unw_isp : 0;
	if (unw_isize > sizeof(unw_interrupted))
		unw_isize = sizeof(unw_interrupted);
	memcpy(unw_interrupted, (const void *)(uintptr_t)unw_isp, unw_isize);
	sink += sig + (si != NULL);
}

static int cmp_captured;

__attribute__((noipa)) int unw_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (!cmp_captured) {
		cmp_captured = 1;
		CAPTURE(COPY_MAX);
	}
	return (a > b) - (a < b);
}

__attribute__((noipa)) void unw_sort_caller(void)
{
	int v[16];
	int i;

	for (i = 0; i < 16; i++)
		v[i] = (i * 7919) % 16;
	cmp_captured = 0;
	qsort(v, 16, sizeof(v[0]), unw_cmp);
	sink += v[0];
}

/* 20 levels of recursion, then qsort: about the 33 frames of the design
 * note's measurement. */
__attribute__((noipa)) int unw_deep(int depth)
{
	int r;

	if (depth == 0) {
		unw_sort_caller();
		return 1;
	}
	r = unw_deep(depth - 1);
	sink += r;
	return r + 1;
}

/* The child of test_other_process parks here, inside libc's pause(). */
__attribute__((noipa)) void unw_child_leaf(int fd)
{
	char c = 'r';

	if (write(fd, &c, 1) != 1)
		_exit(2);
	for (;;) {
		pause();
		sink++;
	}
}

__attribute__((noipa)) void unw_child_mid(int fd)
{
	unw_child_leaf(fd);
	sink++;
}

/* ---- symbol ranges of this binary --------------------------------------- */

struct range {
	uint64_t lo, hi; /* runtime addresses */
};

static int self_range(const char *name, struct range *out)
{
	const struct mapping *m = space_find(&space, (uint64_t)(uintptr_t)&unw_c);
	GElf_Sym sym;

	if (!m || !m->mod || !m->mod->elf ||
	    elf_find_symbol(m->mod->elf, SHT_SYMTAB, STT_FUNC, name, &sym))
		return -1;
	out->lo = sym.st_value + m->bias;
	out->hi = out->lo + sym.st_size;
	return 0;
}

static void assert_in(uint64_t pc, const char *name)
{
	struct range r;

	assert_int_equal(self_range(name, &r), 0);
	if (pc < r.lo || pc >= r.hi)
		fail_msg("pc %#lx not in %s [%#lx, %#lx)", (unsigned long)pc, name,
			 (unsigned long)r.lo, (unsigned long)r.hi);
}

static int in_module(uint64_t pc, const char *name)
{
	const struct mapping *m = space_find(&space, pc);

	return m && m->mod && strstr(m->mod->name, name) != NULL;
}

/* Our frames 1.. are return addresses - 1; backtrace()'s frame 0 is
 * capture_finish itself, frame 1 the return into the leaf. */
static void assert_matches_backtrace(const uint64_t *pcs, int n)
{
	int i;

	assert_true(cap.nbt >= 3);
	assert_true(n >= 2);
	for (i = 1; i < n && i + 1 < cap.nbt; i++)
		if (pcs[i] + 1 != (uint64_t)(uintptr_t)cap.bt[i + 1])
			fail_msg("frame %d: %#lx, backtrace says %#lx", i,
				 (unsigned long)pcs[i] + 1,
				 (unsigned long)(uintptr_t)cap.bt[i + 1]);
	/* Both walks end at _start. */
	assert_int_equal(n, cap.nbt - 1);
}

static int setup(void **state)
{
	void *warm[4];

	/* backtrace() dlopens libgcc_s on first use: map it before loading. */
	backtrace(warm, 4);
	cap_space = &space;
	return space_load(&space, getpid()) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	space_release(&space);
	return 0;
}

/* A new unwinder over this process and the chain just captured (the
 * caller calls unw_chain_caller itself, so it shows in the chain), unwound
 * from the whole stack copy into pcs. Free it with unwind_free. */
static struct unwind *unwind_captured(struct sample *smp, uint64_t *pcs, int *n, unsigned *flags)
{
	struct unwind *u;

	assert_int_equal(unwind_new(&space, &u), 0);
	make_sample(smp, cap.size);
	assert_int_equal(unwind_sample(u, smp, pcs, UNWIND_MAX_FRAMES, n, flags), 0);
	return u;
}

/* ---- tests -------------------------------------------------------------- */

static void test_chain(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	int n, i;

	unw_chain_caller();
	u = unwind_captured(&smp, pcs, &n, &flags);
	assert_true(n >= 6);
	assert_int_equal(pcs[0], cap.regs[SAMPLE_REG_RIP]);
	assert_in(pcs[0], "unw_c");
	assert_in(pcs[1], "unw_b");
	assert_in(pcs[2], "unw_a");
	assert_in(pcs[3], "unw_chain_caller");
	assert_in(pcs[4], "test_chain");
	/* ... through cmocka and back into this binary's main, then libc. */
	for (i = 5; i < n; i++) {
		struct range r;

		assert_int_equal(self_range("main", &r), 0);
		if (pcs[i] >= r.lo && pcs[i] < r.hi)
			break;
	}
	assert_true(i < n);
	assert_true(in_module(pcs[i + 1], "libc.so"));
	/* _start's RA is undefined: a complete stack, not a truncated one. */
	assert_int_equal(flags, 0);
	assert_matches_backtrace(pcs, n);

	/* The same sample again is answered from the rule cache. */
	{
		uint64_t misses = unwind_get_stats(u)->cache_misses;
		uint64_t pcs2[UNWIND_MAX_FRAMES];
		int n2;

		assert_int_equal(unwind_sample(u, &smp, pcs2, UNWIND_MAX_FRAMES, &n2, &flags), 0);
		assert_int_equal(n2, n);
		assert_memory_equal(pcs2, pcs, (size_t)n * sizeof(pcs[0]));
		assert_int_equal(unwind_get_stats(u)->cache_misses, misses);
		assert_int_equal(unwind_get_stats(u)->samples, 2);
		assert_int_equal(unwind_get_stats(u)->frames, 2 * (uint64_t)n);
		assert_true(unwind_get_stats(u)->cache_hits >= (uint64_t)n);
	}
	unwind_free(u);
}

static void test_through_libc_qsort(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	int n, i;

	unw_sort_caller();
	assert_int_equal(cmp_captured, 1);
	assert_int_equal(unwind_new(&space, &u), 0);
	make_sample(&smp, cap.size);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_in(pcs[0], "unw_cmp");
	assert_true(in_module(pcs[1], "libc.so"));
	for (i = 1; i < n && in_module(pcs[i], "libc.so"); i++)
		;
	assert_true(i < n);
	assert_in(pcs[i], "unw_sort_caller");
	assert_in(pcs[i + 1], "test_through_libc_qsort");
	assert_int_equal(flags, 0);
	assert_matches_backtrace(pcs, n);
	unwind_free(u);
}

static void test_stack_realignment(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	int n;

	sink += unw_drap(9);
	assert_int_equal(unwind_new(&space, &u), 0);
	make_sample(&smp, cap.size);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_in(pcs[0], "unw_c");
	assert_in(pcs[1], "unw_drap");
	assert_in(pcs[2], "test_stack_realignment");
	assert_int_equal(flags, 0);
	assert_matches_backtrace(pcs, n);
	unwind_free(u);
}

/* handler → __restore_rt → the interrupted libc code (an exact pc, not a
 * return address) → unw_signal_caller → this test. */
static void test_signal_frame(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct sigaction sa = {0}, old;
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	int n, i;

	sa.sa_handler = unw_handler;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	unw_signal_caller();
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(unwind_new(&space, &u), 0);
	make_sample(&smp, cap.size);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_in(pcs[0], "unw_handler");
	assert_true(in_module(pcs[1], "libc.so")); /* __restore_rt */
	assert_int_equal(pcs[1] + 1, (uint64_t)(uintptr_t)cap.bt[2]);
	assert_true(in_module(pcs[2], "libc.so")); /* interrupted: exact pc */
	assert_int_equal(pcs[2], (uint64_t)(uintptr_t)cap.bt[3]);
	for (i = 2; i < n && in_module(pcs[i], "libc.so"); i++)
		;
	assert_true(i + 1 < n);
	assert_in(pcs[i], "unw_signal_caller");
	assert_in(pcs[i + 1], "test_signal_frame");
	for (; i < n; i++)
		assert_int_equal(pcs[i] + 1, (uint64_t)(uintptr_t)cap.bt[i + 1]);
	assert_int_equal(n, cap.nbt - 1);
	assert_int_equal(flags, 0);
	unwind_free(u);
}

/* A handler on an alternate stack: without the interrupted stack's copy
 * the walk names the interrupted pc and stops there (truncated); with it
 * (sample.stack2) it goes on to the caller, as libgcc's backtrace does. */
static void test_altstack_signal_frame(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct sigaction sa = {0}, old;
	stack_t ss = {.ss_sp = unw_altstack, .ss_size = sizeof(unw_altstack)}, old_ss;
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	int n, i;

	sa.sa_sigaction = unw_alt_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	assert_int_equal(sigaltstack(&ss, &old_ss), 0);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	unw_signal_caller();
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(sigaltstack(&old_ss, NULL), 0);
	assert_true(unw_isize > 0);
	assert_int_equal(unwind_new(&space, &u), 0);

	make_sample(&smp, cap.size);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_in(pcs[0], "unw_alt_handler");
	assert_true(n >= 3);
	assert_int_equal(pcs[2], (uint64_t)(uintptr_t)cap.bt[3]); /* the interrupted pc */
	assert_true(flags & UNWIND_TRUNCATED);
	for (i = 0; i < n; i++)
		assert_true(!in_module(pcs[i], "test_unwind") || i == 0);

	smp.stack2 = unw_interrupted;
	smp.stack2_base = unw_isp;
	smp.stack2_size = unw_isize;
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	for (i = 2; i < n && in_module(pcs[i], "libc.so"); i++)
		;
	assert_true(i + 1 < n);
	assert_in(pcs[i], "unw_signal_caller");
	assert_in(pcs[i + 1], "test_altstack_signal_frame");
	assert_int_equal(pcs[2], (uint64_t)(uintptr_t)cap.bt[3]);
	for (i = 3; i < n; i++)
		assert_int_equal(pcs[i] + 1, (uint64_t)(uintptr_t)cap.bt[i + 1]);
	assert_int_equal(n, cap.nbt - 1);
	assert_int_equal(flags, 0);
	unwind_free(u);
}

/* user_regs_struct → DWARF register numbers (sample.h). */
static void regs_from_ptrace(const struct user_regs_struct *r, uint64_t *out)
{
	out[0] = r->rax;
	out[1] = r->rdx;
	out[2] = r->rcx;
	out[3] = r->rbx;
	out[4] = r->rsi;
	out[5] = r->rdi;
	out[6] = r->rbp;
	out[7] = r->rsp;
	out[8] = r->r8;
	out[9] = r->r9;
	out[10] = r->r10;
	out[11] = r->r11;
	out[12] = r->r12;
	out[13] = r->r13;
	out[14] = r->r14;
	out[15] = r->r15;
	out[16] = r->rip;
}

/* The stack of stopped process pid from ur's rsp up to the end of its
 * mapping in cs (sizeof *stack at most), copied with one process_vm_readv
 * as the ptrace sampler does: the bytes read, or -1 (none, or not all). */
static ssize_t read_stack(pid_t pid, struct space *cs, const struct user_regs_struct *ur,
			  uint8_t (*stack)[16384])
{
	const struct mapping *m = space_find(cs, ur->rsp);
	struct iovec local, remote;

	if (!m)
		return -1;
	local.iov_base = *stack;
	local.iov_len = m->end - ur->rsp < sizeof(*stack) ? m->end - ur->rsp : sizeof(*stack);
	remote.iov_base = (void *)(uintptr_t)ur->rsp;
	remote.iov_len = local.iov_len;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)local.iov_len
		   ? (ssize_t)local.iov_len
		   : -1;
}

/* A new unwinder over cs walks the captured registers ur and got bytes of
 * stack into pcs (n of them, flags). */
static struct unwind *unwind_captured_regs(struct space *cs, const struct user_regs_struct *ur,
					   const uint8_t *stack, ssize_t got, uint64_t *pcs, int *n,
					   unsigned *flags)
{
	struct sample smp = {0};
	struct unwind *u;

	regs_from_ptrace(ur, smp.regs);
	smp.regs_mask = (1u << SAMPLE_NREGS) - 1;
	smp.stack = stack;
	smp.stack_size = (uint64_t)got;
	assert_int_equal(unwind_new(cs, &u), 0);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, n, flags), 0);
	return u;
}

/* Another process, captured as the ptrace sampler does: SEIZE, INTERRUPT,
 * GETREGS, one process_vm_readv, and unwound through its own space. */
static void test_other_process(void **state)
{
	static uint8_t stack[16384];
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct user_regs_struct ur;
	struct space cs = {0};
	struct unwind *u;
	unsigned flags;
	int pfd[2], st, n, i;
	ssize_t got;
	pid_t pid;
	char c;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		unw_child_mid(pfd[1]);
		_exit(0);
	}
	assert_true(pid > 0);
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	usleep(20000); /* let it reach pause() */

	/* Nothing may bail out while the child lives: collect, kill, then
	 * assert, so a failure never leaves a stopped process behind. */
	got = -1;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		skip(); /* no ptrace permission here (yama, container) */
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) == 0 && waitpid(pid, &st, __WALL) == pid &&
	    ptrace(PTRACE_GETREGS, pid, 0, &ur) == 0 && space_load(&cs, pid) == 0)
		got = read_stack(pid, &cs, &ur, &stack);
	kill(pid, SIGKILL);
	waitpid(pid, &st, __WALL);
	assert_true(got > 0);

	u = unwind_captured_regs(&cs, &ur, stack, got, pcs, &n, &flags);
	/* The child is a fork of this process: same addresses. */
	assert_true(in_module(pcs[0], "libc.so"));
	for (i = 0; i < n && in_module(pcs[i], "libc.so"); i++)
		;
	assert_true(i + 2 < n);
	assert_in(pcs[i], "unw_child_leaf");
	assert_in(pcs[i + 1], "unw_child_mid");
	assert_in(pcs[i + 2], "test_other_process");
	assert_int_equal(flags, 0);
	unwind_free(u);
	space_release(&cs);
}

/* A stripped Go program (go build -ldflags="-s -w": no .symtab, no DWARF,
 * and Go writes no .eh_frame) stopped in its busy loop: the walk follows
 * the pclntab's SP deltas through a leaf without a frame (where frame
 * pointers would skip its caller) up to runtime.goexit, and ends there
 * without truncation. Skipped without go. */
static const char go_prog[] =
    "package main\n"
    "import \"runtime\"\n"
    "var sink int\n"
    "//go:noinline\n"
    "func spin(n int) int { s := 0; for i := 0; i < n; i++ { s += i ^ (s >> 3) }; "
    "return s }\n"
    "//go:noinline\n"
    "func leaf() int { return spin(1000000) }\n"
    "//go:noinline\n"
    "func outer() int { return leaf() + 1 }\n"
    "func main() { runtime.LockOSThread(); for { sink += outer() } }\n";

/* The Go function at pc of process cs (through the module's own table). */
static const char *go_name(struct space *cs, uint64_t pc, struct gopclntab *g)
{
	const struct mapping *m = space_find(cs, pc);
	struct gopclntab_func f;

	if (!m || !m->mod || !m->mod->elf)
		return "";
	space_module_fill(m->mod);
	if (!g->data && gopclntab_read(m->mod->elf, g))
		return "";
	return gopclntab_find(g, pc - m->bias, &f) == 0 ? f.name : "";
}

static void test_go_pclntab(void **state)
{
	static uint8_t stack[16384];
	char dir[] = "/tmp/test_unwind_go.XXXXXX", cmd[512], path[600];
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct user_regs_struct ur;
	struct space cs = {0};
	struct gopclntab g = {0};
	struct unwind *u;
	unsigned flags;
	int st, n, i;
	ssize_t got = -1;
	bool seen_leaf = false, seen_outer = false;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/main.go", dir);
	put_text(path, "w", go_prog);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && command -v go >/dev/null && GO111MODULE=off go build -ldflags='-s -w' "
		 "-o prog main.go >/dev/null 2>&1",
		 dir);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
		skip(); /* no go here */
	}
	snprintf(path, sizeof(path), "%s/prog", dir);
	pid = fork();
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	usleep(300000); /* into its loop */
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		skip();
	}
	/* The main thread runs the locked main goroutine: stop it in its
	 * loop (a try may land in the runtime: preemption, a GC step). */
	for (int tries = 0; tries < 20 && !seen_leaf; tries++) {
		got = -1;
		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0 || waitpid(pid, &st, __WALL) != pid ||
		    ptrace(PTRACE_GETREGS, pid, 0, &ur) != 0)
			break;
		space_release(&cs);
		memset(&cs, 0, sizeof(cs));
		/* g points into the released space's module: read it again
		 * (a try that landed in the runtime crashed here, once) */
		memset(&g, 0, sizeof(g));
		if (space_load(&cs, pid) == 0)
			got = read_stack(pid, &cs, &ur, &stack);
		if (got > 0 && !strcmp(go_name(&cs, ur.rip, &g), "main.spin"))
			seen_leaf = true;
		else
			ptrace(PTRACE_CONT, pid, 0, 0), usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, __WALL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_true(seen_leaf);

	u = unwind_captured_regs(&cs, &ur, stack, got, pcs, &n, &flags);
	for (i = 0; i < n; i++) {
		const char *name = go_name(&cs, pcs[i], &g);

		seen_outer |= !strcmp(name, "main.outer");
		if (i == 1)
			assert_string_equal(name, "main.leaf"); /* spin has no frame */
	}
	assert_true(seen_outer);
	assert_string_equal(go_name(&cs, pcs[n - 1], &g), "runtime.goexit");
	assert_int_equal(flags & (UNWIND_TRUNCATED | UNWIND_FAILED), 0);
	unwind_free(u);
	space_release(&cs);
}

static void test_truncated(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES];
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	int n, full;

	unw_chain_caller();
	u = unwind_captured(&smp, pcs, &full, &flags);
	assert_int_equal(flags, 0);

	/* A copy that ends inside the chain: some callers, then truncated. */
	make_sample(&smp, 256);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_true(flags & UNWIND_TRUNCATED);
	assert_false(flags & UNWIND_FAILED);
	assert_true(n >= 2 && n < full);
	assert_in(pcs[1], "unw_b");

	/* No stack at all: only the leaf. */
	make_sample(&smp, 0);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_int_equal(n, 1);
	assert_int_equal(flags, UNWIND_TRUNCATED | UNWIND_FAILED);
	smp.stack = NULL;
	smp.stack_size = 4096;
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_int_equal(n, 1);

	/* The frame limit. */
	make_sample(&smp, cap.size);
	assert_int_equal(unwind_sample(u, &smp, pcs, 3, &n, &flags), 0);
	assert_int_equal(n, 3);
	assert_int_equal(flags, UNWIND_TRUNCATED);
	assert_in(pcs[2], "unw_a");

	assert_int_equal(unwind_get_stats(u)->truncated, 4);
	assert_int_equal(unwind_get_stats(u)->failed, 2);

	/* No registers: not a sample we can walk. */
	smp.regs_mask = 0;
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), -EINVAL);
	unwind_free(u);
}

static void test_ready_pcs(void **state)
{
	const uint64_t ready[3] = {0x1000, 0x2000, 0x3000};
	uint64_t pcs[4];
	struct unwind *u;
	struct sample smp = {0};
	unsigned flags;
	int n;

	assert_int_equal(unwind_new(&space, &u), 0);
	smp.upcs = ready;
	smp.nupcs = 3;
	assert_int_equal(unwind_sample(u, &smp, pcs, 4, &n, &flags), 0);
	assert_int_equal(n, 3);
	assert_int_equal(flags, 0);
	assert_memory_equal(pcs, ready, sizeof(ready));
	assert_int_equal(unwind_sample(u, &smp, pcs, 2, &n, &flags), 0);
	assert_int_equal(n, 2);
	assert_int_equal(flags, UNWIND_TRUNCATED);
	unwind_free(u);
}

/* Code without a mapping (JIT): a hand-built rbp chain. */
static void test_frame_pointer_fallback(void **state)
{
	const uint64_t base = 0x7f0000100000ULL;
	uint64_t stk[32] = {0}, pcs[8];
	struct unwind *u;
	struct sample smp = {0};
	unsigned flags;
	int n;

	assert_null(space_find(&space, 0x1000));
	stk[4] = base + 64; /* [rbp] = caller's rbp */
	stk[5] = 0x2000;    /* [rbp + 8] = return address */
	stk[8] = base + 96;
	stk[9] = 0x3000;
	stk[12] = 0; /* outermost: RA 0 */
	stk[13] = 0;
	smp.regs[SAMPLE_REG_RIP] = 0x1000;
	smp.regs[SAMPLE_REG_RSP] = base;
	smp.regs[SAMPLE_REG_RBP] = base + 32;
	smp.regs_mask = 1u << SAMPLE_REG_RIP | 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RBP;
	smp.stack = (const uint8_t *)stk;
	smp.stack_size = sizeof(stk);
	assert_int_equal(unwind_new(&space, &u), 0);
	assert_int_equal(unwind_sample(u, &smp, pcs, 8, &n, &flags), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pcs[0], 0x1000);
	assert_int_equal(pcs[1], 0x1fff);
	assert_int_equal(pcs[2], 0x2fff);
	/* The leaf is in no mapping of the space: ingest reloads the maps. */
	assert_int_equal(flags, UNWIND_NO_CFI | UNWIND_UNMAPPED);

	/* An rbp chain that points down the stack is refused. */
	stk[8] = base + 8;
	assert_int_equal(unwind_sample(u, &smp, pcs, 8, &n, &flags), 0);
	assert_int_equal(n, 3);
	assert_int_equal(flags, UNWIND_NO_CFI | UNWIND_UNMAPPED | UNWIND_TRUNCATED);

	/* Without rbp there is nothing to follow. */
	smp.regs_mask &= ~(1u << SAMPLE_REG_RBP);
	assert_int_equal(unwind_sample(u, &smp, pcs, 8, &n, &flags), 0);
	assert_int_equal(n, 1);
	assert_int_equal(flags, UNWIND_NO_CFI | UNWIND_UNMAPPED | UNWIND_TRUNCATED | UNWIND_FAILED);
	unwind_free(u);
}

/* gcc's epilogue: after `pop %rbp` the CFI moves the CFA on but still says
 * rbp is saved at CFA - 16, below rsp; unw_epi_ret is the `ret`. */
__asm__(".text\n"
	".globl unw_epi\n"
	".type unw_epi,@function\n"
	"unw_epi:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rdi, %rbp\n"
	"pop %rbp\n"
	".cfi_def_cfa_offset 8\n"
	".globl unw_epi_ret\n"
	"unw_epi_ret:\n"
	"ret\n"
	".cfi_endproc\n"
	".size unw_epi, .-unw_epi\n");
extern char unw_epi_ret[];

/* A sample at that `ret`, returning into _start (whose return address is
 * undefined: the walk ends there, complete). The copy starts at rsp, so
 * the stale rbp slot is not in it: rbp is the caller's already. */
static void test_epilogue(void **state)
{
	uint64_t stk[4] = {0}, pcs[4];
	struct range start;
	struct unwind *u;
	struct sample smp = {0};
	unsigned flags;
	int n;

	assert_int_equal(self_range("_start", &start), 0);
	stk[0] = start.lo + 5; /* return address */
	smp.regs[SAMPLE_REG_RIP] = (uint64_t)(uintptr_t)unw_epi_ret;
	smp.regs[SAMPLE_REG_RSP] = 0x7f0000200000ULL;
	smp.regs[SAMPLE_REG_RBP] = 0x1234;
	smp.regs_mask = 1u << SAMPLE_REG_RIP | 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RBP;
	smp.stack = (const uint8_t *)stk;
	smp.stack_size = sizeof(stk);
	assert_int_equal(unwind_new(&space, &u), 0);
	unwind_set_fallback(u, false); /* the rule cache alone */
	assert_int_equal(unwind_sample(u, &smp, pcs, 4, &n, &flags), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[1], start.lo + 4);
	assert_int_equal(flags, 0);
	/* Only rbp is taken from the register: the return address still has
	 * to be in the copy. */
	smp.stack_size = 4;
	assert_int_equal(unwind_sample(u, &smp, pcs, 4, &n, &flags), 0);
	assert_int_equal(n, 1);
	assert_true(flags & UNWIND_TRUNCATED);
	unwind_free(u);
}

/* The linker's .plt FDE is an expression; a pc after the push of the
 * lazy-binding index (pc & 15 >= 11) has the return address at rsp + 8. */
static void test_plt_rule(void **state)
{
	const struct mapping *m = space_find(&space, (uint64_t)(uintptr_t)&unw_c);
	uint64_t stk[8] = {0}, pcs[4], plt = 0;
	struct unwind *u;
	struct sample smp = {0};
	Elf_Scn *scn = NULL;
	size_t shstr;
	unsigned flags;
	int n;

	assert_non_null(m);
	assert_int_equal(elf_getshdrstrndx(m->mod->elf, &shstr), 0);
	while ((scn = elf_nextscn(m->mod->elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(m->mod->elf, shstr, sh.sh_name), ".plt") &&
		    sh.sh_size >= 32 && sh.sh_entsize == 16)
			plt = sh.sh_addr + m->bias;
	}
	if (!plt)
		skip();
	assert_int_equal(unwind_new(&space, &u), 0);
	smp.regs_mask = 1u << SAMPLE_REG_RIP | 1u << SAMPLE_REG_RSP;
	smp.regs[SAMPLE_REG_RSP] = 0x7f0000200000ULL;
	smp.stack = (const uint8_t *)stk;
	smp.stack_size = sizeof(stk);

	/* First entry after PLT0, at the jmp: RA at rsp. */
	smp.regs[SAMPLE_REG_RIP] = plt + 16;
	stk[0] = 0x5001;
	assert_int_equal(unwind_sample(u, &smp, pcs, 2, &n, &flags), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[1], 0x5000);
	assert_false(flags & UNWIND_NO_CFI);

	/* At the final jmp, after the push: RA at rsp + 8. */
	smp.regs[SAMPLE_REG_RIP] = plt + 16 + 11;
	stk[0] = 3;
	stk[1] = 0x6001;
	assert_int_equal(unwind_sample(u, &smp, pcs, 2, &n, &flags), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[1], 0x6000);
	unwind_free(u);
}

/* A reload that finds new executable mappings bumps the generation: every
 * cached rule is refilled. A reload that finds none keeps the cache. */
static void test_generation_invalidates(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES], misses;
	struct unwind *u;
	struct sample smp;
	unsigned flags, gen = space.generation;
	void *code;
	int n;

	unw_chain_caller();
	u = unwind_captured(&smp, pcs, &n, &flags);
	misses = unwind_get_stats(u)->cache_misses;
	assert_int_equal(misses, (uint64_t)n);

	assert_int_equal(space_load(&space, getpid()), 0);
	assert_int_equal(space.generation, gen);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_int_equal(unwind_get_stats(u)->cache_misses, misses);

	code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(code != MAP_FAILED);
	assert_int_equal(space_load(&space, getpid()), 0);
	munmap(code, 4096);
	assert_int_equal(space.generation, gen + 1);
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	assert_int_equal(unwind_get_stats(u)->cache_misses, 2 * misses);
	assert_int_equal(flags, 0);
	unwind_free(u);
}

/* Random stacks and registers: the walk must end, inside bounds. */
static void test_garbage(void **state)
{
	static uint8_t junk[16384];
	uint64_t pcs[UNWIND_MAX_FRAMES], seed = 0x9e3779b97f4a7c15ULL;
	const uint64_t base = 0x7ffd00000000ULL;
	struct unwind *u;
	struct sample smp = {0};
	unsigned flags;
	int n, iter;
	size_t i;

	assert_int_equal(unwind_new(&space, &u), 0);
	for (iter = 0; iter < 2000; iter++) {
		for (i = 0; i < sizeof(junk); i += 8) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			/* Mix plausible values in: stack addresses and code. */
			uint64_t v = seed;
			if ((seed & 3) == 0)
				v = base + (seed >> 8) % sizeof(junk);
			else if ((seed & 3) == 1)
				v = (uint64_t)(uintptr_t)&unw_b + (seed >> 8) % 64;
			memcpy(junk + i, &v, 8);
		}
		smp.regs_mask = 1u << SAMPLE_REG_RIP | 1u << SAMPLE_REG_RSP | 1u << SAMPLE_REG_RBP;
		smp.regs[SAMPLE_REG_RSP] = base;
		smp.regs[SAMPLE_REG_RBP] = base + (seed >> 20) % sizeof(junk);
		switch (iter % 4) {
		case 0:
			smp.regs[SAMPLE_REG_RIP] = seed;
			break;
		case 1:
			smp.regs[SAMPLE_REG_RIP] = (uint64_t)(uintptr_t)&unw_a + (seed >> 4) % 48;
			break;
		case 2:
			smp.regs[SAMPLE_REG_RIP] = (uint64_t)(uintptr_t)&qsort + (seed >> 4) % 64;
			break;
		default:
			smp.regs[SAMPLE_REG_RIP] = (uint64_t)(uintptr_t)&memcpy + (seed >> 4) % 256;
			break;
		}
		smp.stack = junk;
		smp.stack_size = (iter & 1) ? sizeof(junk) : (seed >> 30) % sizeof(junk);
		assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
		assert_true(n >= 1 && n <= UNWIND_MAX_FRAMES);
		assert_int_equal(pcs[0], smp.regs[SAMPLE_REG_RIP]);
	}
	assert_int_equal(unwind_get_stats(u)->samples, 2000);
	unwind_free(u);
}

static void test_speed(void **state)
{
	uint64_t pcs[UNWIND_MAX_FRAMES], frames = 0;
	const int iters = 10000;
	struct unwind *u;
	struct sample smp;
	unsigned flags;
	double t0, t1, cold;
	int n = 0, i;

	unw_deep(20);
	assert_int_equal(unwind_new(&space, &u), 0);
	make_sample(&smp, cap.size > 16384 ? 16384 : cap.size);
	t0 = now_us();
	assert_int_equal(unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags), 0);
	cold = now_us() - t0;
	assert_true(n >= 30);
	assert_in(pcs[n - 1], "_start");
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		unwind_sample(u, &smp, pcs, UNWIND_MAX_FRAMES, &n, &flags);
		frames += (uint64_t)n;
	}
	t1 = now_us();
	print_message("unwind: %.3f us/sample warm (%.1f ns/frame), %d frames, 16 KiB copy; "
		      "first (rule-cache misses, CFI already open): %.1f us\n",
		      (t1 - t0) / iters, (t1 - t0) * 1e3 / (double)frames, n, cold);
	assert_int_equal(unwind_get_stats(u)->samples, (uint64_t)iters + 1);
	unwind_free(u);
}

TEST_MAIN(setup, teardown, TEST(test_chain), TEST(test_through_libc_qsort),
	  TEST(test_stack_realignment), TEST(test_signal_frame), TEST(test_altstack_signal_frame),
	  TEST(test_other_process), TEST(test_truncated), TEST(test_ready_pcs),
	  TEST(test_frame_pointer_fallback), TEST(test_plt_rule), TEST(test_epilogue),
	  TEST(test_generation_invalidates), TEST(test_garbage), TEST(test_speed),
	  TEST(test_go_pclntab))
