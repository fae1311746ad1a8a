/* Unit tests for kallsyms: parsing (text symbols only, aliases, data
 * symbols, modules, bad lines, all-zero addresses) and the real
 * /proc/kallsyms through sym_resolve_kernel. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/symbols/kallsyms.h"
#include "stacktop/symbols/sym.h"

static void test_kallsyms(void **state)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 t do_one_initcall\n"
				   "ffffffff81000100 T do_one_initcall_alias\n"
				   "ffffffff81000200 D some_data\n"
				   "ffffffff81000300 T schedule\n"
				   "bad line\n"
				   "ffffffffc0001000 t ext4_readpage\t[ext4]\n";
	static const char zero[] = "0000000000000000 T _stext\n"
				   "0000000000000000 T schedule\n";
	struct kallsyms_sym ks;
	struct kallsyms *k;

	assert_int_equal(kallsyms_new(&k), 0);
	assert_int_equal(kallsyms_parse(k, text), 0);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000150ull, &ks), 0);
	assert_string_equal(ks.name, "do_one_initcall");
	assert_int_equal(ks.start, 0xffffffff81000100ull);
	/* Data symbols are not functions: do_one_initcall runs to schedule. */
	assert_int_equal(ks.end, 0xffffffff81000300ull);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000250ull, &ks), 0);
	assert_string_equal(ks.name, "do_one_initcall");
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000301ull, &ks), 0);
	assert_string_equal(ks.name, "schedule");
	assert_int_equal(kallsyms_lookup(k, 0xffffffffc0001004ull, &ks), 0);
	assert_string_equal(ks.name, "ext4_readpage");
	/* The last one gets KALLSYMS_LAST_SPAN. */
	assert_int_equal(ks.end, 0xffffffffc0001000ull + KALLSYMS_LAST_SPAN);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff80000000ull, &ks), -ENOENT);

	/* No addresses (no permission): nothing is named. */
	assert_int_equal(kallsyms_parse(k, zero), 0);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000150ull, &ks), -ENOENT);
	assert_int_equal(kallsyms_lookup(k, 0, &ks), -ENOENT);
	kallsyms_free(k);
}

/* A function shares its __pfx_ padding's name bytes; modules listed out of
 * order, and a symbol below the kernel's sorted run, are found all the
 * same; so are the symbols of a table too wide for 32-bit offsets. */
static void test_kallsyms_pfx_order(void **state)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff810000f0 t __pfx_foo\n"
				   "ffffffff81000100 t foo\n"
				   "ffffffff81000200 T __pfx_bar\n"
				   "ffffffff81000300 T baz\n"
				   "ffffffffc0002000 t mod_b\t[b]\n"
				   "ffffffffc0001000 t mod_a\t[a]\n"
				   "ffffffff81000080 t early\n";
	static const struct {
		uint64_t pc, start, end;
		const char *name;
	} want[] = {
	    {0xffffffff810000f8ull, 0xffffffff810000f0ull, 0xffffffff81000100ull, "__pfx_foo"},
	    {0xffffffff81000100ull, 0xffffffff81000100ull, 0xffffffff81000200ull, "foo"},
	    {0xffffffff81000208ull, 0xffffffff81000200ull, 0xffffffff81000300ull, "__pfx_bar"},
	    {0xffffffff81000301ull, 0xffffffff81000300ull, 0xffffffffc0001000ull, "baz"},
	    {0xffffffffc0001010ull, 0xffffffffc0001000ull, 0xffffffffc0002000ull, "mod_a"},
	    {0xffffffffc0002010ull, 0xffffffffc0002000ull,
	     0xffffffffc0002000ull + KALLSYMS_LAST_SPAN, "mod_b"},
	    {0xffffffff81000090ull, 0xffffffff81000080ull, 0xffffffff810000f0ull, "early"},
	    {0xffffffff81000010ull, 0xffffffff81000000ull, 0xffffffff81000080ull, "_stext"},
	};
	struct kallsyms_sym ks;
	struct kallsyms *k;

	assert_int_equal(kallsyms_new(&k), 0);
	assert_int_equal(kallsyms_parse(k, text), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(kallsyms_lookup(k, want[i].pc, &ks), 0);
		assert_string_equal(ks.name, want[i].name);
		assert_int_equal(ks.start, want[i].start);
		assert_int_equal(ks.end, want[i].end);
	}
	/* a table spanning more than 4 GiB keeps its 64-bit starts */
	assert_int_equal(kallsyms_parse(k, "0000000000001000 T low\n"
					   "ffffffff81000000 T high\n"),
			 0);
	assert_int_equal(kallsyms_lookup(k, 0x1010, &ks), 0);
	assert_string_equal(ks.name, "low");
	assert_int_equal(ks.end, 0xffffffff81000000ull);
	assert_int_equal(kallsyms_lookup(k, 0xffffffff81000010ull, &ks), 0);
	assert_string_equal(ks.name, "high");
	assert_int_equal(kallsyms_lookup(k, 0x10, &ks), -ENOENT);
	kallsyms_free(k);
}

/* The real /proc/kallsyms (we are root here, so it has addresses). */
static void test_kallsyms_real(void **state)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr = 0, a;
	char line[512], name[256], type;
	struct sym_info si;
	struct sym *sy;

	if (!f)
		skip();
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, "schedule") && (type == 'T' || type == 't')) {
			addr = a;
			break;
		}
	}
	fclose(f);
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(sym_resolve_kernel(sy, addr + 4, &si), 0);
	assert_true(si.kernel);
	assert_string_equal(si.module, "[kernel]");
	if (addr == 0) {
		assert_null(si.func);
	} else {
		assert_non_null(si.func);
		assert_string_equal(si.func, "schedule");
		assert_int_equal(si.offset, 4);
	}
	sym_free(sy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_kallsyms),
	    TEST(test_kallsyms_pfx_order),
	    TEST(test_kallsyms_real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
