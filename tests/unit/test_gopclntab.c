/* Unit tests for elf/gopclntab: a Go program built here (stripped, as
 * production builds are) named, lined and inlined from its .gopclntab
 * alone, checked against the unstripped build's .symtab; and hostile
 * headers refused. Skipped when go is not installed. */
#include <errno.h>
#include <fcntl.h>
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

#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/gopclntab.h"
#include "helpers.h"

static const char prog[] = "package main\n"			       /* 1 */
			   "\n"					       /* 2 */
			   "func add3(x int) int { return x*3 + 1 }\n" /* 3 */
			   "\n"					       /* 4 */
			   "//go:noinline\n"			       /* 5 */
			   "func caller(n int) int {\n"		       /* 6 */
			   "\ts := 0\n"				       /* 7 */
			   "\tfor i := 0; i < n; i++ {\n"	       /* 8 */
			   "\t\ts += add3(i)\n"			       /* 9 */
			   "\t}\n"				       /* 10 */
			   "\treturn s\n"			       /* 11 */
			   "}\n"				       /* 12 */
			   "\n"					       /* 13 */
			   "func main() { println(caller(10)) }\n";    /* 14 */

static char dir[] = "/tmp/test_gopclntab.XXXXXX";
static bool have_go;

struct file {
	Elf *elf;
	struct gopclntab g;
};

static int group_setup(void **state)
{
	char cmd[1024], path[512];

	(void)state;
	elf_version(EV_CURRENT);
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/main.go", dir);
	put_text(path, "w", prog);
	snprintf(
	    cmd, sizeof(cmd),
	    "cd %s && command -v go >/dev/null && go build -o plain main.go >/dev/null 2>&1 && "
	    "go build -ldflags='-s -w' -o stripped main.go >/dev/null 2>&1 && "
	    "objcopy --rename-section .gopclntab=.data.rel.ro stripped unnamed",
	    dir);
	have_go = system(cmd) == 0;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void open_file(const char *name, struct file *f)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elfimage_open(fd, ELFIMAGE_NAMES, ELFIMAGE_MAX, &f->elf), 0);
	close(fd);
	assert_int_equal(gopclntab_read(f->elf, &f->g), 0);
}

/* A function's entry by its name, walking the whole table. */
static bool by_name(const struct gopclntab *g, const char *name, struct gopclntab_func *out)
{
	for (uint64_t i = 0; i < g->nfunc; i++)
		if (gopclntab_nth(g, i, out) == 0 && !strcmp(out->name, name))
			return true;
	return false;
}

static void test_names_match_symtab(void **state)
{
	struct file plain, stripped;
	struct gopclntab_func f;
	GElf_Sym s;
	const char *names[] = {"main.caller", "main.main", "runtime.goexit", "runtime.mstart"};

	(void)state;
	if (!have_go)
		skip();
	open_file("plain", &plain);
	open_file("stripped", &stripped);
	assert_int_equal(stripped.g.version >= 118, 1); /* go 1.19 here */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char sym[64];

		/* assembly functions are "runtime.goexit.abi0" in .symtab */
		snprintf(sym, sizeof(sym), "%s%s", names[i],
			 elf_find_symbol(plain.elf, SHT_SYMTAB, STT_FUNC, names[i], &s) ? ".abi0"
											: "");
		assert_int_equal(elf_find_symbol(plain.elf, SHT_SYMTAB, STT_FUNC, sym, &s), 0);
		/* the stripped file's table names the unstripped file's address */
		assert_int_equal(gopclntab_find(&stripped.g, s.st_value + 1, &f), 0);
		assert_string_equal(f.name, names[i]);
		assert_int_equal(f.entry, s.st_value);
		if (s.st_size)
			assert_true(f.end >= s.st_value + s.st_size);
	}
	/* below the first and past the last function: nothing */
	assert_int_equal(gopclntab_find(&stripped.g, 0x1000, &f), -ENOENT);
	assert_int_equal(gopclntab_find(&stripped.g, UINT64_MAX - 1, &f), -ENOENT);
	elfimage_close(plain.elf);
	elfimage_close(stripped.elf);
}

static void test_lines_and_deltas(void **state)
{
	struct file st;
	struct gopclntab_func f;
	const char *file;
	int line, lo = 1 << 30, hi = 0;
	int32_t d, dmax = 0;

	(void)state;
	if (!have_go)
		skip();
	open_file("stripped", &st);
	assert_true(by_name(&st.g, "main.caller", &f));
	assert_int_equal(gopclntab_line(&st.g, &f, f.entry, &file, &line), 0);
	assert_non_null(file);
	assert_non_null(strstr(file, "main.go"));
	assert_int_equal(line, 6);
	assert_int_equal(gopclntab_sp_delta(&st.g, &f, f.entry, &d), 0);
	assert_int_equal(d, 0); /* nothing pushed at the entry */
	for (uint64_t pc = f.entry; pc < f.end; pc++) {
		if (gopclntab_line(&st.g, &f, pc, &file, &line) == 0 && line > 0) {
			lo = line < lo ? line : lo;
			hi = line > hi ? line : hi;
		}
	}
	/* its lines (with add3's line 3 inlined into it) */
	assert_true(lo >= 3 && hi <= 12 && hi >= 9);
	/* caller is a leaf without a frame; main calls: it has one */
	assert_true(by_name(&st.g, "main.main", &f));
	for (uint64_t pc = f.entry; pc < f.end; pc++)
		if (gopclntab_sp_delta(&st.g, &f, pc, &d) == 0 && d > dmax)
			dmax = d;
	assert_true(dmax > 0 && dmax < 4096);
	assert_int_equal(gopclntab_line(&st.g, &f, f.end, &file, &line), -ENOENT);
	elfimage_close(st.elf);
}

static void test_inline_chain(void **state)
{
	struct file st;
	struct gopclntab_func f;
	struct gopclntab_inl inl[8];
	int n, found = 0;

	(void)state;
	if (!have_go)
		skip();
	open_file("stripped", &st);
	assert_non_null(st.g.region); /* moduledata found go:func.* */
	assert_true(by_name(&st.g, "main.caller", &f));
	for (uint64_t pc = f.entry; pc < f.end; pc++) {
		const char *file = NULL;
		int line = 0;

		assert_int_equal(gopclntab_inline(&st.g, &f, pc, inl, 8, &n, &file, &line), 0);
		if (!n)
			continue;
		found++;
		assert_int_equal(n, 1);
		assert_string_equal(inl[0].func, "main.add3");
		assert_int_equal(inl[0].line, 3);
		assert_int_equal(line, 9); /* the call, in caller */
		assert_non_null(file);
		assert_non_null(strstr(file, "main.go"));
	}
	assert_true(found > 0);
	elfimage_close(st.elf);
}

/* A table in a section of another name is found by its magic. */
static void test_found_by_magic(void **state)
{
	struct file st;
	struct gopclntab_func f;

	(void)state;
	if (!have_go)
		skip();
	open_file("unnamed", &st);
	assert_true(by_name(&st.g, "main.caller", &f));
	assert_int_equal(gopclntab_find(&st.g, f.entry + 1, &f), 0);
	assert_string_equal(f.name, "main.caller");
	assert_non_null(st.g.region); /* moduledata still points at it */
	elfimage_close(st.elf);
}

static void test_stack_tops(void **state)
{
	static const char *const yes[] = {"runtime.goexit", "runtime.goexit.abi0",
					  "runtime.mstart"};
	static const char *const no[] = {"runtime.goexit1", "main.main", NULL};

	(void)state;
	CHECK_PRED(gopclntab_is_stack_top, yes, no);
}

/* A header put together by hand: each bad field is refused. */
static void test_hostile_headers(void **state)
{
	uint8_t b[256];
	uint64_t w[8] = {1, 1, 0x401000, 72, 80, 88, 96, 104};
	struct gopclntab g;
	struct gopclntab_func f;

	(void)state;
	memset(b, 0, sizeof(b));
	b[0] = 0xf1, b[1] = 0xff, b[2] = 0xff, b[3] = 0xff, b[6] = 1, b[7] = 8;
	memcpy(b + 8, w, sizeof(w));
	assert_int_equal(gopclntab_parse(b, sizeof(b), 0, &g), 0);
	assert_int_equal(g.version, 120);
	/* no _func at offset 0 of the function table: the function has no name */
	assert_int_equal(gopclntab_find(&g, 0x401000, &f), -ENOENT);
	assert_int_equal(gopclntab_parse(b, 7, 0, &g), -ENOEXEC); /* short */
	b[7] = 3;						  /* pointer size */
	assert_int_equal(gopclntab_parse(b, sizeof(b), 0, &g), -ENOEXEC);
	b[7] = 8;
	b[0] = 0xfb; /* Go 1.2-1.15: not read */
	assert_int_equal(gopclntab_parse(b, sizeof(b), 0, &g), -ENOEXEC);
	b[0] = 0xf1;
	w[7] = 1000; /* function table past the end */
	memcpy(b + 8, w, sizeof(w));
	assert_int_equal(gopclntab_parse(b, sizeof(b), 0, &g), -ENOEXEC);
	w[7] = 104;
	w[0] = UINT64_MAX / 8; /* more functions than the bytes hold */
	memcpy(b + 8, w, sizeof(w));
	assert_int_equal(gopclntab_parse(b, sizeof(b), 0, &g), -ENOEXEC);
}

TEST_MAIN(group_setup, group_teardown, TEST(test_names_match_symtab), TEST(test_lines_and_deltas),
	  TEST(test_inline_chain), TEST(test_found_by_magic), TEST(test_stack_tops),
	  TEST(test_hostile_headers))
