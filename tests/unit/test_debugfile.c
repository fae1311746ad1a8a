/* Unit tests for debugfile: a module's debug file found by build-id under a
 * fake root, by .gnu_debuglink (CRC checked, .debug/ searched), never a
 * FIFO opened, a sparse giant refused by its size; a fetched file checked
 * by build-id. Each also resolves through sym, which names from what
 * debugfile found (or falls back to FDE names). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
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

#include "stacktop/elf/elfsec.h"
#include "stacktop/symbols/debugfile.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/unwind/space.h"
#include "helpers.h"
#include "symtest.h"

/* si names func at offset, in symtest.c. */
static void assert_named(const struct sym_info *si, const char *func, uint64_t offset)
{
	assert_non_null(si->func);
	assert_string_equal(si->func, func);
	assert_int_equal(si->offset, offset);
	assert_non_null(si->file);
	assert_string_equal(si->file, "symtest.c");
}

/* Makes ROOT/usr/lib/debug/.build-id/xx/ for the build-id id and writes
 * to path the name of the debug file in it (xx/rest.debug). */
static void buildid_debug_path(const uint8_t *id, size_t id_len, const char *root, char *path,
			       size_t size)
{
	char cmd[PATH_MAX + 64];
	size_t n;

	n = (size_t)snprintf(path, size, "%s/usr/lib/debug/.build-id/%02x", root, id[0]);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	n += (size_t)snprintf(path + n, size - n, "/");
	for (size_t i = 1; i < id_len; i++)
		n += (size_t)snprintf(path + n, size - n, "%02x", id[i]);
	snprintf(path + n, size - n, ".debug");
}

/* symtest-buildid has neither symbols nor a debuglink; its debug file is
 * found only under ROOT/usr/lib/debug/.build-id/xx/rest.debug. */
static void test_buildid_fake_root(void **state)
{
	char file[PATH_MAX + 64], *root;
	struct symtest_files f;
	uint64_t alpha, gamma;
	uint8_t id[20];
	size_t id_len;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	GElf_Sym gs;
	Elf *e;

	symtest_files(&f, "symtest-buildid");
	root = f.tmp;
	alpha = elf_symbol(f.full, "symtest_alpha");
	gamma = elf_symbol(f.full, "symtest_gamma");
	assert_int_equal(sym_new(&sy), 0);

	/* Without the tree: no name for these addresses but their FDE's. */
	assert_int_equal(space_module_open_path(f.bin, &mod), 0);
	assert_true(mod->build_id_len >= 2);
	memcpy(id, mod->build_id, mod->build_id_len);
	id_len = mod->build_id_len;
	assert_null(debugfile_find(mod, root));
	assert_int_equal(sym_resolve_module(sy, mod, root, alpha, true, &si), 0);
	assert_non_null(si.func);
	assert_non_null(strstr(si.func, "symtest-buildid!0x"));
	assert_null(si.file);
	assert_int_equal(si.offset, 0);
	assert_int_equal(si.func_start, alpha);
	assert_string_equal(si.module, "symtest-buildid");
	space_module_put(mod);

	/* With it (the module was freed above, so its table is rebuilt). */
	assert_int_equal(space_module_open_path(f.bin, &mod), 0);
	assert_int_equal(mod->build_id_len, id_len);
	buildid_debug_path(id, id_len, root, file, sizeof(file));
	copy_file(f.dbg, file, 0644);
	e = debugfile_find(mod, root);
	assert_non_null(e);
	assert_int_equal(elf_find_symbol(e, SHT_SYMTAB, -1, "symtest_gamma", &gs), 0);
	assert_int_equal(gs.st_value, gamma);
	elf_end(e);
	/* Only under that root. */
	assert_null(debugfile_find(mod, ""));
	assert_int_equal(sym_resolve_module(sy, mod, root, gamma + 2, true, &si), 0);
	assert_named(&si, "symtest_gamma", 2);
	assert_int_equal(si.func_start, gamma);
	assert_true(si.line > 0);
	space_module_put(mod);
	sym_free(sy);
	rm_rf(root);
}

/* .gnu_debuglink: the CRC must match; the .debug/ subdirectory is searched. */
static void test_debuglink_crc_and_subdir(void **state)
{
	char path[PATH_MAX + 64], path2[PATH_MAX + 64], *dir;
	struct symtest_files f;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	uint64_t beta;
	GElf_Sym gs;
	Elf *e;

	symtest_files(&f, "symtest-debuglink");
	dir = f.tmp;
	beta = elf_symbol(f.full, "symtest_beta");
	assert_int_equal(sym_new(&sy), 0);

	/* A debug file with the right name but other contents: rejected. */
	snprintf(path, sizeof(path), "%s/symtest-debuglink", dir);
	copy_file(f.bin, path, 0755);
	snprintf(path2, sizeof(path2), "%s/symtest-debuglink.debug", dir);
	write_file(path2, "not the debug file\n");
	assert_int_equal(space_module_open_path(path, &mod), 0);
	assert_null(debugfile_find(mod, NULL));
	assert_int_equal(sym_resolve_module(sy, mod, NULL, beta, false, &si), 0);
	assert_non_null(si.func);
	assert_non_null(strstr(si.func, "!0x")); /* its FDE, not the debug file's name */
	space_module_put(mod);
	unlink(path2);
	unlink(path);

	/* The right one in DIR/.debug/ (a new copy of the binary: new inode,
	 * new module). */
	snprintf(path, sizeof(path), "%s/bin", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path2, sizeof(path2), "%s/bin/.debug", dir);
	assert_int_equal(mkdir(path2, 0755), 0);
	snprintf(path2, sizeof(path2), "%s/bin/.debug/symtest-debuglink.debug", dir);
	copy_file(f.dbg, path2, 0644);
	snprintf(path, sizeof(path), "%s/bin/symtest-debuglink", dir);
	copy_file(f.bin, path, 0755);
	assert_int_equal(space_module_open_path(path, &mod), 0);
	e = debugfile_find(mod, "");
	assert_non_null(e);
	assert_int_equal(elf_find_symbol(e, SHT_SYMTAB, -1, "symtest_beta", &gs), 0);
	assert_int_equal(gs.st_value, beta);
	elf_end(e);
	assert_int_equal(sym_resolve_module(sy, mod, "", beta + 1, true, &si), 0);
	assert_named(&si, "symtest_beta", 1);
	space_module_put(mod);
	sym_free(sy);
	rm_rf(dir);
}

/* A child blocked opening path for writing: it gets through only if
 * someone opens the FIFO for reading. */
static pid_t fifo_writer(const char *path)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(20);
		_exit(open(path, O_WRONLY) >= 0 ? 0 : 1);
	}
	usleep(100 * 1000);
	return pid;
}

/* Still blocked (the FIFO was never opened for reading); then killed. */
static void assert_fifo_unopened(pid_t writer)
{
	int status;

	usleep(100 * 1000);
	assert_int_equal(waitpid(writer, &status, WNOHANG), 0);
	kill(writer, SIGKILL);
	waitpid(writer, &status, 0);
}

/* A FIFO at path, where mod's debug file is looked for under root:
 * neither debugfile_find nor naming a pc of mod opens it. Puts mod;
 * returns whether the pc was named all the same. */
static bool fifo_never_opened(struct sym *sy, struct module *mod, const char *path,
			      const char *root)
{
	struct sym_info si;
	pid_t writer;

	assert_int_equal(mkfifo(path, 0644), 0);
	writer = fifo_writer(path);
	alarm(10);
	assert_null(debugfile_find(mod, root));
	assert_int_equal(sym_resolve_module(sy, mod, root, 0x1000, true, &si), 0);
	alarm(0);
	assert_fifo_unopened(writer);
	space_module_put(mod);
	return si.func != NULL;
}

/* A FIFO at the build-id path and at the debuglink path: neither is ever
 * opened (a device node there would run its driver's open as root). */
static void test_debug_fifo_never_opened(void **state)
{
	char file[PATH_MAX + 64];
	struct symtest_files f;
	struct module *mod;
	struct sym *sy;

	symtest_files(&f, "symtest-buildid");
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(space_module_open_path(f.bin, &mod), 0);
	buildid_debug_path(mod->build_id, mod->build_id_len, f.tmp, file, sizeof(file));
	assert_false(fifo_never_opened(sy, mod, file, f.tmp));
	rm_rf(f.tmp);

	symtest_files(&f, "symtest-debuglink");
	snprintf(file, sizeof(file), "%s/symtest-debuglink", f.tmp);
	copy_file(f.bin, file, 0755);
	assert_int_equal(space_module_open_path(file, &mod), 0);
	snprintf(file, sizeof(file), "%s/symtest-debuglink.debug", f.tmp);
	fifo_never_opened(sy, mod, file, "");
	sym_free(sy);
	rm_rf(f.tmp);
}

/* A 4 GiB sparse file at the debuglink path: not CRC'd whole (that took
 * 17 s); refused by its size (TFILE_CRC_MAX) in well under a second. */
static void test_debuglink_sparse_capped(void **state)
{
	char path[PATH_MAX + 64];
	struct symtest_files f;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	struct timespec t0, t1;
	int fd;

	symtest_files(&f, "symtest-debuglink");
	snprintf(path, sizeof(path), "%s/symtest-debuglink", f.tmp);
	copy_file(f.bin, path, 0755);
	assert_int_equal(space_module_open_path(path, &mod), 0);
	snprintf(path, sizeof(path), "%s/symtest-debuglink.debug", f.tmp);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(4ull << 30)), 0);
	close(fd);
	assert_int_equal(sym_new(&sy), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_null(debugfile_find(mod, ""));
	assert_int_equal(sym_resolve_module(sy, mod, "", 0x1000, true, &si), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_null(si.func);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1000);
	space_module_put(mod);
	sym_free(sy);
	rm_rf(f.tmp);
}

/* A debuginfod cache file is taken only with the build-id asked for. */
static void test_open_checked(void **state)
{
	struct symtest_files f;
	struct module *mod;
	uint8_t id[20];
	char path[PATH_MAX + 64];
	Elf *e;

	symtest_files(&f, "symtest-debuglink");
	assert_int_equal(space_module_open_path(f.bin, &mod), 0);
	assert_true(mod->build_id_len >= 2);
	memcpy(id, mod->build_id, mod->build_id_len);
	e = debugfile_open_checked(f.dbg, id, mod->build_id_len);
	assert_non_null(e);
	assert_true(elfsec_has_symtab(e));
	elf_end(e);
	id[0] ^= 1;
	assert_null(debugfile_open_checked(f.dbg, id, mod->build_id_len));
	snprintf(path, sizeof(path), "%s/not-elf", f.tmp);
	write_file(path, "not an ELF file\n");
	assert_null(debugfile_open_checked(path, mod->build_id, mod->build_id_len));
	space_module_put(mod);
	rm_rf(f.tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_buildid_fake_root),
	    TEST(test_debuglink_crc_and_subdir),
	    TEST(test_debug_fifo_never_opened),
	    TEST(test_debuglink_sparse_capped),
	    TEST(test_open_checked),
	};
	symtest_init();
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
