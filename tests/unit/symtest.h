/*
 * symtest.h — what the symbol tests share (test_sym, test_debugfile,
 * test_srcline, test_perfmap; header only): where the test targets are
 * (build/targets, beside build/tests), small file helpers, the symtest
 * variants' files, and a symbol's ELF address read with libelf so a test
 * does not trust the code under test. Include after the system headers and
 * cmocka.h; call symtest_init first thing in main.
 */
#ifndef STACKTOP_TEST_SYMTEST_H
#define STACKTOP_TEST_SYMTEST_H

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

static char targets_dir[1024];

/* build/tests/test_X -> build/targets */
static inline void symtest_init(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(targets_dir, sizeof(targets_dir), "%.900s/../targets", exe);
	} else {
		snprintf(targets_dir, sizeof(targets_dir), "build/targets");
	}
}

static inline void target_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", targets_dir, name);
	if (access(buf, X_OK)) {
		fprintf(stderr, "missing %s: build it with `make targets` (tests/targets/sym.mk)\n",
			buf);
		fail();
	}
}

/* ELF address of a symbol from an unstripped file's .symtab, read here
 * with libelf so the test does not trust the code under test. */
static inline uint64_t elf_symbol(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY);
	uint64_t val = 0;
	GElf_Sym s;
	Elf *e;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	if (elf_find_symbol(e, SHT_SYMTAB, -1, name, &s) == 0)
		val = s.st_value;
	elf_end(e);
	close(fd);
	assert_true(val != 0);
	return val;
}

/* elf_symbol of name in the test target of that name (build/targets). */
static inline uint64_t target_symbol(const char *target, const char *name)
{
	char path[PATH_MAX];

	target_path(path, sizeof(path), target);
	return elf_symbol(path, name);
}

static inline void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t r;

	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)r), r);
	close(in);
	close(out);
}

static inline void write_file(const char *path, const char *text)
{
	put_text(path, "w", text);
}

/* The files of the symtest variant tests: the variant itself (bin), the
 * unstripped symtest (full), the separate debug file (dbg) and a new
 * directory to build a tree in (tmp, remove it with rm_rf). */
struct symtest_files {
	char full[PATH_MAX], bin[PATH_MAX], dbg[PATH_MAX], tmp[32];
};

static inline void symtest_files(struct symtest_files *f, const char *variant)
{
	target_path(f->full, sizeof(f->full), "symtest");
	target_path(f->bin, sizeof(f->bin), variant);
	snprintf(f->dbg, sizeof(f->dbg), "%s/symtest-debuglink.debug", targets_dir);
	strcpy(f->tmp, "/tmp/symtest-XXXXXX");
	assert_non_null(mkdtemp(f->tmp));
}

/* The line of the first occurrence of text in the target's source. */
static inline int source_line(const char *text)
{
	char path[PATH_MAX + 64];
	int n;

	snprintf(path, sizeof(path), "%s/../../tests/targets/inltest.c", targets_dir);
	n = line_of(path, text);
	assert_true(n > 0);
	return n;
}

#endif
