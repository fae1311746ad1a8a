/* Unit tests for the symbolizer: live targets (build/targets/symtest and its
 * stripped, debuglink and build-id variants built by tests/targets/sym.mk)
 * resolved through space_load, with names from a debug file;
 * demangling; a JIT's perf map through a live process; FDE names, inline
 * chains, the PLT; lookup cost. The parts have their own tests:
 * test_debugfile, test_srcline, test_perfmap, test_kallsyms, test_fde. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"
#include "helpers.h"
#include "symtest.h"
#include "../fuzz/elfimage.h"

struct fn {
	char name[64];
	uint64_t addr;
	int line; /* line of the opening brace */
};

struct child {
	pid_t pid;
	int in_fd; /* child's stdin: closing it ends the child */
	struct fn fns[3];
	int nfns;
};

/* Start a symtest variant and read the addresses it reports. */
static void child_start(const char *name, struct child *c)
{
	int in[2], out[2];
	char path[PATH_MAX], line[256];
	FILE *f;

	target_path(path, sizeof(path), name);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->nfns = 0;
	f = fdopen(out[0], "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct fn *fn = &c->fns[c->nfns];
		void *addr;

		if (!strncmp(line, "ready", 5))
			break;
		assert_true(c->nfns < 3);
		assert_int_equal(sscanf(line, "%63s %p %d", fn->name, &addr, &fn->line), 3);
		fn->addr = (uint64_t)(uintptr_t)addr;
		c->nfns++;
	}
	fclose(f);
	assert_int_equal(c->nfns, 3);
}

static void child_stop(struct child *c)
{
	int st;

	close(c->in_fd);
	waitpid(c->pid, &st, 0);
}

/* The function's lines: the brace, the body, the closing brace. */
static void assert_line_in_fn(const struct sym_info *si, const struct fn *fn)
{
	assert_non_null(si->file);
	assert_string_equal(si->file, "symtest.c");
	assert_in_range(si->line, fn->line - 1, fn->line + 4);
}

/* Resolve every function of c, checking names (expected or NULL), offsets
 * and, when want_line, lines. */
static void check_child(struct sym *sy, const struct child *c, const char *module,
			const char *const expect[3], bool lines)
{
	struct space s = {0};
	int i;

	assert_int_equal(space_load(&s, c->pid), 0);
	for (i = 0; i < 3; i++) {
		const struct fn *fn = &c->fns[i];
		const struct mapping *m = space_find(&s, fn->addr);
		struct sym_info si, si2;

		assert_non_null(m);
		assert_int_equal(sym_resolve_user(sy, &s, fn->addr, lines, &si), 0);
		assert_non_null(si.module);
		assert_string_equal(si.module, module);
		assert_false(si.kernel);
		assert_false(si.jit);
		if (!expect[i]) {
			/* No symbol: named by its FDE, "module!0xFILEOFF". */
			char want[256];

			snprintf(want, sizeof(want), "%s!0x%" PRIx64, module,
				 fn->addr - m->start + m->pgoff);
			assert_non_null(si.func);
			assert_string_equal(si.func, want);
			assert_int_equal(si.func_start, fn->addr);
			assert_int_equal(si.offset, 0);
			continue;
		}
		assert_non_null(si.func);
		assert_string_equal(si.func, expect[i]);
		assert_int_equal(si.offset, 0);
		assert_int_equal(si.func_start, fn->addr);
		if (lines)
			assert_line_in_fn(&si, fn);
		else
			assert_null(si.file);
		/* Inside the function, the same name (sym's strings live
		 * until its next call: kept as a copy). */
		char name[SYM_NAME_MAX];
		snprintf(name, sizeof(name), "%s", si.func);
		assert_int_equal(sym_resolve_user(sy, &s, fn->addr + 5, false, &si2), 0);
		assert_string_equal(si2.func, name);
		assert_int_equal(si2.offset, 5);
		assert_int_equal(si2.func_start, fn->addr);
	}
	space_release(&s);
}

/* Start the symtest variant and check its functions (names[i] NULL: not
 * expected to be found), with their lines or without. */
static void check_variant(const char *variant, const char *const names[3], bool lines)
{
	struct sym *sy;
	struct child c;

	assert_int_equal(sym_new(&sy), 0);
	child_start(variant, &c);
	check_child(sy, &c, variant, names, lines);
	child_stop(&c);
	sym_free(sy);
}

static void test_live_full(void **state)
{
	const char *const names[3] = {"symtest_alpha", "symtest_beta", "symtest_gamma"};

	check_variant("symtest", names, true);
}

static void test_live_stripped(void **state)
{
	/* gamma is static: not in .dynsym, and past beta's size. */
	const char *const names[3] = {"symtest_alpha", "symtest_beta", NULL};

	check_variant("symtest-stripped", names, false);
}

static void test_live_debuglink(void **state)
{
	const char *const names[3] = {"symtest_alpha", "symtest_beta", "symtest_gamma"};

	check_variant("symtest-debuglink", names, true);
}

/* Lines come from the ELF itself; the same address twice is cached. */
static void test_module_lines_cached(void **state)
{
	char full[PATH_MAX];
	struct module *mod;
	struct sym_info a, b;
	struct sym *sy;
	uint64_t alpha;

	target_path(full, sizeof(full), "symtest");
	alpha = elf_symbol(full, "symtest_alpha");
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(space_module_open_path(full, &mod), 0);
	char file[SYM_NAME_MAX];

	assert_int_equal(sym_resolve_module(sy, mod, NULL, alpha, true, &a), 0);
	assert_string_equal(a.func, "symtest_alpha");
	assert_non_null(a.file);
	snprintf(file, sizeof(file), "%s", a.file); /* a's strings live until the next call */
	assert_int_equal(sym_resolve_module(sy, mod, NULL, alpha, true, &b), 0);
	assert_string_equal(b.file, file);
	assert_int_equal(a.line, b.line);
	assert_true(a.line > 0);
	/* Before the first function: no symbol, offset is the address. */
	assert_int_equal(sym_resolve_module(sy, mod, NULL, 0x10, false, &a), 0);
	assert_null(a.func);
	assert_int_equal(a.offset, 0x10);
	assert_int_equal(sym_resolve_module(sy, mod, NULL, alpha, false, &b), 0);
	space_module_put(mod);
	/* Strings outlive the module they came from (until sym's next call). */
	assert_string_equal(b.func, "symtest_alpha");
	assert_string_equal(b.module, "symtest");
	sym_free(sy);
}

/* A live process: a pc outside every mapping goes to /tmp/perf-PID.map,
 * found through /proc/PID/root with the pid from NSpid. */
static void test_perfmap_live(void **state)
{
	char path[64];
	struct space s = {0};
	struct sym_info si;
	struct sym *sy;
	struct child c;

	assert_int_equal(sym_new(&sy), 0);
	child_start("symtest", &c);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)c.pid);
	write_file(path, "10000 40 jitted_thing\n30000 40 _ZN3foo3barEv\n");
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(space_load(&s, c.pid), 0);
	assert_null(space_find(&s, 0x10010));
	assert_int_equal(sym_resolve_user(sy, &s, 0x10010, true, &si), 0);
	assert_non_null(si.func);
	assert_string_equal(si.func, "jitted_thing");
	assert_string_equal(si.module, "[jit]");
	assert_int_equal(si.offset, 0x10);
	/* Names from a perf map are demangled. */
	assert_int_equal(sym_resolve_user(sy, &s, 0x30010, false, &si), 0);
	assert_string_equal(si.func, "foo::bar()");
	assert_true(si.jit);
	/* Not in the map either: [unknown]. */
	assert_int_equal(sym_resolve_user(sy, &s, 0x20010, true, &si), 0);
	assert_null(si.func);
	assert_string_equal(si.module, "[unknown]");
	assert_int_equal(si.offset, 0x20010);
	unlink(path);
	space_release(&s);
	child_stop(&c);
	sym_free(sy);
}

/* Our own process: libc aliases resolve to the plain name (printf, not
 * _IO_printf; malloc, not __libc_malloc), our code to its file. */
static void test_self(void **state)
{
	static const struct {
		void *fn;
		const char *name;
	} want[] = {{(void *)qsort, "qsort"},
		    {(void *)printf, "printf"},
		    {(void *)malloc, "malloc"},
		    /* versioned in libc's debug .symtab: clock_gettime@@GLIBC_2.17 */
		    {(void *)clock_gettime, "clock_gettime"}};
	struct space s = {0};
	struct sym_info si;
	struct sym *sy;
	size_t i;

	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(space_load(&s, getpid()), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(
		    sym_resolve_user(sy, &s, (uint64_t)(uintptr_t)want[i].fn + 1, false, &si), 0);
		assert_non_null(si.func);
		assert_string_equal(si.func, want[i].name);
		assert_string_equal(si.module, "libc.so.6");
		assert_int_equal(si.offset, 1);
	}
	assert_int_equal(sym_resolve_user(sy, &s, (uint64_t)(uintptr_t)test_self, true, &si), 0);
	assert_string_equal(si.func, "test_self");
	assert_string_equal(si.module, "test_sym");
	assert_string_equal(si.file, "test_sym.c");
	space_release(&s);
	sym_free(sy);
}

/* Prints the mean cost of 100,000 warm lookups of pcs[0..2] (lines or
 * not); the last one's answer is left in *si. */
static void time_lookups(struct sym *sy, struct space *s, const uint64_t *pcs, bool lines,
			 struct sym_info *si)
{
	struct timespec t0, t1;
	double ns;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100000; i++)
		assert_int_equal(sym_resolve_user(sy, s, pcs[i % 3], lines, si), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e5;
	printf("sym_resolve_user warm%s: %.0f ns/lookup\n", lines ? " with lines" : "", ns);
}

static void test_cost(void **state)
{
	struct space s = {0};
	struct sym_info si;
	struct sym *sy;
	struct child c;
	uint64_t pcs[3];
	int i;

	assert_int_equal(sym_new(&sy), 0);
	child_start("symtest", &c);
	assert_int_equal(space_load(&s, c.pid), 0);
	for (i = 0; i < 3; i++) {
		pcs[i] = c.fns[i].addr + 3;
		assert_int_equal(sym_resolve_user(sy, &s, pcs[i], true, &si), 0);
	}
	time_lookups(sy, &s, pcs, false, &si);
	time_lookups(sy, &s, pcs, true, &si);
	assert_string_equal(si.file, "symtest.c");
	space_release(&s);
	child_stop(&c);
	sym_free(sy);
}

/* A pc in the PLT has no symbol; a stub is named by its relocation
 * ("strlen@plt"), the resolver's entry [plt], never a bare offset. */
static void test_plt(void **state)
{
	struct module *mod;
	struct sym *sy;
	struct sym_info si;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t plt = 0;

	assert_int_equal(space_module_open_path("/proc/self/exe", &mod), 0);
	assert_non_null(mod->elf);
	assert_int_equal(elf_getshdrstrndx(mod->elf, &shstrndx), 0);
	while ((scn = elf_nextscn(mod->elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(mod->elf, shstrndx, sh.sh_name), ".plt") && sh.sh_size > 20)
			plt = sh.sh_addr + 20;
	assert_true(plt != 0);
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(sym_resolve_module(sy, mod, "", plt, false, &si), 0);
	assert_non_null(si.func);
	/* Entry 1 is reloc 0's stub: named by its symbol, as perf does
	 * ("pthread_cond_signal@plt"), not one "[plt]" for all (issue 24). */
	size_t len = strlen(si.func);
	assert_true(len > 4 && !strcmp(si.func + len - 4, "@plt") && si.func[0] != '[');
	assert_int_equal(si.offset, 4);
	/* Entry 0 is the resolver's: no symbol of its own. */
	assert_int_equal(sym_resolve_module(sy, mod, "", plt - 16, false, &si), 0);
	assert_string_equal(si.func, "[plt]");
	sym_free(sy);
	space_module_put(mod);
}

/* ---- function ranges (FDEs) and inline chains (issue 12) ---- */

/* A stripped binary: every pc of inl_outer is one function, named by its
 * FDE as "module!0xFILEOFF" (this PIE's text has file offset == address). */
static void test_stripped_by_fde(void **state)
{
	char bin[PATH_MAX], want[128];
	const struct sym_module_note *notes;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	uint64_t outer, a;
	size_t nn, i;
	bool noted = false;

	(void)state;
	target_path(bin, sizeof(bin), "inltest-stripped");
	outer = target_symbol("inltest", "inl_outer");
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(space_module_open_path(bin, &mod), 0);
	snprintf(want, sizeof(want), "inltest-stripped!0x%" PRIx64, outer);
	for (a = outer; a < outer + 0x80; a += 0x10) {
		assert_int_equal(sym_resolve_module(sy, mod, "", a, false, &si), 0);
		assert_non_null(si.func);
		assert_string_equal(si.func, want);
		assert_int_equal(si.func_start, outer);
		assert_int_equal(si.offset, a - outer);
	}
	nn = sym_modules(sy, &notes);
	for (i = 0; i < nn; i++)
		if (!strcmp(notes[i].name, "inltest-stripped"))
			noted = notes[i].sources == SYM_SRC_FDE;
	assert_true(noted);
	space_module_put(mod);
	sym_free(sy);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* -O2 inlines inl_hot and inl_cold into inl_outer: their pcs expand into a
 * chain of one inlined level, with the line inside the callee, while the
 * outer function's own line is the call. Looked up once per address. */
static void test_inline_chain(void **state)
{
	char full[PATH_MAX];
	struct sym_info chain[SYM_INLINE_MAX], si;
	struct module *mod;
	struct sym *sy;
	uint64_t outer, a, hot = 0, cold = 0;
	int n, hot_body, hot_call, cold_call;
	double t0, first, cached;

	(void)state;
	target_path(full, sizeof(full), "inltest");
	hot_body = source_line("SPIN(x, 7 * n)");
	hot_call = source_line("x = inl_hot(x, n)");
	cold_call = source_line("x = inl_cold(x, n)");
	outer = elf_symbol(full, "inl_outer");
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(space_module_open_path(full, &mod), 0);
	t0 = now_ns();
	assert_int_equal(sym_inline_module(sy, mod, "", outer + 0x40, chain, SYM_INLINE_MAX, &n),
			 0);
	first = now_ns() - t0;
	for (a = outer; a < outer + 0x100 && (!hot || !cold); a++) {
		assert_int_equal(sym_inline_module(sy, mod, "", a, chain, SYM_INLINE_MAX, &n), 0);
		if (n == 1 && !hot && !strcmp(chain[0].func, "inl_hot"))
			hot = a;
		if (n == 1 && !cold && !strcmp(chain[0].func, "inl_cold"))
			cold = a;
	}
	assert_true(hot && cold);
	assert_int_equal(sym_inline_module(sy, mod, "", hot, chain, SYM_INLINE_MAX, &n), 0);
	assert_int_equal(n, 1);
	assert_true(chain[0].inlined);
	assert_string_equal(chain[0].module, "inltest");
	assert_string_equal(chain[0].file, "inltest.c");
	assert_int_equal(chain[0].line, hot_body);
	/* The function the pc lies in, and its line: the call of inl_hot. */
	assert_int_equal(sym_resolve_module(sy, mod, "", hot, true, &si), 0);
	assert_string_equal(si.func, "inl_outer");
	assert_false(si.inlined);
	assert_int_equal(si.line, hot_call);
	assert_int_equal(sym_resolve_module(sy, mod, "", cold, true, &si), 0);
	assert_int_equal(si.line, cold_call);
	/* Code that is not inlined: no chain. */
	assert_int_equal(
	    sym_inline_module(sy, mod, "", elf_symbol(full, "main"), chain, SYM_INLINE_MAX, &n), 0);
	assert_int_equal(n, 0);
	/* max cuts the chain. */
	assert_int_equal(sym_inline_module(sy, mod, "", hot, chain, 0, &n), 0);
	assert_int_equal(n, 0);
	/* Cached: the same address again costs a hash probe, not DWARF. */
	t0 = now_ns();
	for (int i = 0; i < 1000; i++)
		sym_inline_module(sy, mod, "", hot, chain, SYM_INLINE_MAX, &n);
	cached = (now_ns() - t0) / 1000;
	print_message("inline chain: first lookup %.0f ns, cached %.0f ns\n", first, cached);
	assert_true(cached * 10 < first);
	space_module_put(mod);
	sym_free(sy);
}

/* The name sym gives ELF address a of mod (NULL: none). */
static const char *name_at(struct sym *sy, struct module *mod, uint64_t a)
{
	struct sym_info si;

	assert_int_equal(sym_resolve_module(sy, mod, "", a, false, &si), 0);
	return si.func;
}

/* Hostile symbol tables (issue 28): 3,000 symbols sharing one 1 MiB name
 * cost no copy of it (the table keeps offsets) and show it cut to
 * SYM_NAME_MAX with SYM_NAME_CUT; a mangled name is demangled, a symbol
 * version dropped, aliases chosen by rank; a name running to the end of
 * the string table is cut, never read past. */
static void test_hostile_names(void **state)
{
	enum { NSHARED = 3000 };
	size_t nstr = (1 << 20) + 64, len, off;
	char *strs = calloc(1, nstr + 32);
	Elf64_Sym *syms = calloc(NSHARED + 8, sizeof(*syms));
	struct module mod = {.name = "hostile", .refs = 1};
	struct sym *sy;
	const char *n;
	uint8_t *img;
	int k = 0;

	assert_non_null(strs);
	assert_non_null(syms);
	memset(strs, 'N', 1 << 20); /* the long name at 0 */
	off = (1 << 20) + 1;
	for (k = 0; k < NSHARED; k++)
		syms[k] = elfimage_func(0, ELFIMAGE_TEXT + (uint64_t)k * 16, 16, STB_GLOBAL);
	strcpy(strs + off, "_ZN3foo3barEv");
	syms[k++] = elfimage_func((uint32_t)off, 0x20000, 16, STB_GLOBAL);
	off += 14;
	strcpy(strs + off, "clock_gettime@@GLIBC_2.17");
	syms[k++] = elfimage_func((uint32_t)off, 0x20010, 16, STB_GLOBAL);
	off += 26;
	strcpy(strs + off, "__libc_malloc");
	syms[k++] = elfimage_func((uint32_t)off, 0x20020, 16, STB_GLOBAL);
	strcpy(strs + off + 14, "malloc");
	syms[k++] = elfimage_func((uint32_t)off + 14, 0x20020, 16, STB_GLOBAL);
	off += 21;
	memset(strs + off, 'T', nstr - off); /* runs to the section's last NUL */
	syms[k++] = elfimage_func((uint32_t)off, 0x20030, 16, STB_GLOBAL);
	img = elfimage_build((const uint8_t *)syms, (size_t)k * sizeof(*syms),
			     (const uint8_t *)strs, nstr, &len);
	assert_non_null(img);
	mod.elf = elf_memory((char *)img, len);
	assert_non_null(mod.elf);
	assert_int_equal(sym_new(&sy), 0);
	for (int i = 0; i < NSHARED; i += 97) {
		n = name_at(sy, &mod, ELFIMAGE_TEXT + (uint64_t)i * 16 + 4);
		assert_non_null(n);
		assert_int_equal(strlen(n), SYM_NAME_MAX - 1);
		assert_string_equal(n + SYM_NAME_MAX - sizeof(SYM_NAME_CUT), SYM_NAME_CUT);
		assert_int_equal(strspn(n, "N"), SYM_NAME_MAX - sizeof(SYM_NAME_CUT));
	}
	assert_string_equal(name_at(sy, &mod, 0x20004), "foo::bar()");
	assert_string_equal(name_at(sy, &mod, 0x20014), "clock_gettime");
	assert_string_equal(name_at(sy, &mod, 0x20024), "malloc");
	n = name_at(sy, &mod, 0x20034);
	assert_non_null(n);
	assert_true(strlen(n) < SYM_NAME_MAX);
	assert_int_equal(n[0], 'T');
	for (int i = 0; i < SPACE_EXT_COUNT; i++) {
		if (mod.ext[i] && mod.ext_free[i])
			mod.ext_free[i](mod.ext[i]);
	}
	elf_end(mod.elf);
	sym_free(sy);
	free(img);
	free(syms);
	free(strs);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_stripped_by_fde),
	    TEST(test_inline_chain),
	    TEST(test_plt),
	    TEST(test_live_full),
	    TEST(test_live_stripped),
	    TEST(test_live_debuglink),
	    TEST(test_module_lines_cached),
	    TEST(test_perfmap_live),
	    TEST(test_self),
	    TEST(test_cost),
	    TEST(test_hostile_names),
	};
	symtest_init();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
