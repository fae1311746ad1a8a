/* Unit tests for srcline over the test targets' DWARF: file:line of an
 * address, cached; the inline chain of a pc in inlined code (inltest, -O2)
 * with its call site; no chain outside inlined code; the full source path
 * of a basename; a srcline without DWARF. (Through sym, with the function
 * named and its own line: test_sym's test_inline_chain.) */
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/srcline.h"
#include "stacktop/unwind/space.h"
#include "helpers.h"
#include "symtest.h"

/* No symbol table here: every pc is outside any symbol. */
static bool no_symbol(void *ctx, uint64_t addr, uint64_t *start, uint64_t *end)
{
	(void)ctx;
	(void)addr;
	(void)start;
	(void)end;
	return false;
}

/* The srcline of target name's own DWARF, and its module. */
static struct srcline *open_target(const char *name, struct module **mod)
{
	char path[PATH_MAX];
	struct srcline *sl;
	Dwarf *dw;

	target_path(path, sizeof(path), name);
	assert_int_equal(space_module_open_path(path, mod), 0);
	dw = dwarf_begin_elf((*mod)->elf, DWARF_C_READ, NULL);
	assert_non_null(dw);
	assert_int_equal(srcline_new(dw, no_symbol, NULL, &sl), 0);
	assert_true(srcline_has_dwarf(sl));
	return sl;
}

/* open_target's undoing. */
static void close_target(struct srcline *sl, struct module *mod)
{
	srcline_free(sl);
	space_module_put(mod);
}

static void test_line_cached(void **state)
{
	char buf[PATH_MAX];
	const struct srcline_loc *a, *b;
	struct srcline *sl;
	struct module *mod;
	uint64_t alpha;

	(void)state;
	alpha = target_symbol("symtest", "symtest_alpha");
	sl = open_target("symtest", &mod);
	assert_int_equal(srcline_lookup(sl, alpha, &a), 0);
	assert_non_null(a->file);
	assert_string_equal(a->file, "symtest.c");
	assert_true(a->line > 0);
	assert_int_equal(a->ninl, 0);
	assert_int_equal(srcline_lookup(sl, alpha, &b), 0);
	assert_ptr_equal(a, b);
	/* The full path: the CU's file table, joined to its directory. */
	assert_int_equal(srcline_source_path(sl, alpha, "symtest.c", buf, sizeof(buf)), 0);
	assert_true(strlen(buf) > strlen("symtest.c"));
	assert_string_equal(buf + strlen(buf) - strlen("/symtest.c"), "/symtest.c");
	assert_int_equal(access(buf, R_OK), 0);
	assert_int_equal(srcline_source_path(sl, alpha, "nosuch.c", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(srcline_source_path(sl, alpha, "symtest.c", buf, 4), -ENOENT);
	/* Outside every CU: nothing known. */
	assert_int_equal(srcline_lookup(sl, 0x10, &a), 0);
	assert_null(a->file);
	assert_int_equal(a->line, 0);
	close_target(sl, mod);
}

/* inl_hot is inlined into inl_outer: one level, the pc's own line in
 * inl_hot, called from inl_outer's call line. */
static void test_inline_chain(void **state)
{
	const struct srcline_loc *l;
	struct srcline *sl;
	struct module *mod;
	uint64_t outer, a;
	int hot_body, hot_call;
	bool found = false;

	(void)state;
	hot_body = source_line("SPIN(x, 7 * n)");
	hot_call = source_line("x = inl_hot(x, n)");
	outer = target_symbol("inltest", "inl_outer");
	sl = open_target("inltest", &mod);
	for (a = outer; a < outer + 0x100 && !found; a++) {
		assert_int_equal(srcline_lookup(sl, a, &l), 0);
		found = l->ninl == 1 && !strcmp(l->inl[0].func, "inl_hot");
	}
	assert_true(found);
	assert_string_equal(l->file, "inltest.c");
	assert_int_equal(l->line, hot_body);
	assert_non_null(l->inl[0].call_file);
	assert_string_equal(l->inl[0].call_file, "inltest.c");
	assert_int_equal(l->inl[0].call_line, hot_call);
	/* Code that is not inlined: no chain. */
	assert_int_equal(srcline_lookup(sl, target_symbol("inltest", "main"), &l), 0);
	assert_int_equal(l->ninl, 0);
	close_target(sl, mod);
}

/* Without DWARF every address is unknown, and nothing fails. */
static void test_no_dwarf(void **state)
{
	const struct srcline_loc *l;
	struct srcline *sl;
	char buf[64];

	(void)state;
	assert_int_equal(srcline_new(NULL, no_symbol, NULL, &sl), 0);
	assert_false(srcline_has_dwarf(sl));
	for (uint64_t a = 0x1000; a < 0x1000 + 200 * 16; a += 16) {
		assert_int_equal(srcline_lookup(sl, a, &l), 0);
		assert_null(l->file);
		assert_int_equal(l->line, 0);
		assert_int_equal(l->ninl, 0);
	}
	assert_int_equal(srcline_source_path(sl, 0x1000, "a.c", buf, sizeof(buf)), -ENOENT);
	srcline_free(sl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_line_cached),
	    TEST(test_inline_chain),
	    TEST(test_no_dwarf),
	};
	symtest_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
