/* Unit tests for the symbolizer: live targets (build/targets/symtest and its
 * stripped, debuglink and build-id variants built by tests/targets/sym.mk)
 * resolved through space_load; debug-file lookup under a fake root;
 * demangling; perf map parsing, trust and reload; kallsyms; lookup cost. */
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

#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"
#include "helpers.h"

static char targets_dir[1024];

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

static void target_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", targets_dir, name);
	if (access(buf, X_OK)) {
		fprintf(stderr, "missing %s: build it with `make targets` (tests/targets/sym.mk)\n",
			buf);
		fail();
	}
}

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
		/* Inside the function, and the same interned string. */
		assert_int_equal(sym_resolve_user(sy, &s, fn->addr + 5, false, &si2), 0);
		assert_ptr_equal(si2.func, si.func);
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

/* ELF address of a symbol from an unstripped file's .symtab, read here
 * with libelf so the test does not trust the code under test. */
static uint64_t elf_symbol(const char *path, const char *name)
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

static void copy_file(const char *from, const char *to, mode_t mode)
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

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The files of the symtest variant tests: the variant itself (bin), the
 * unstripped symtest (full), the separate debug file (dbg) and a new
 * directory to build a tree in (tmp, remove it with rm_rf). */
struct symtest_files {
	char full[PATH_MAX], bin[PATH_MAX], dbg[PATH_MAX], tmp[32];
};

static void symtest_files(struct symtest_files *f, const char *variant)
{
	target_path(f->full, sizeof(f->full), "symtest");
	target_path(f->bin, sizeof(f->bin), variant);
	snprintf(f->dbg, sizeof(f->dbg), "%s/symtest-debuglink.debug", targets_dir);
	strcpy(f->tmp, "/tmp/symtest-XXXXXX");
	assert_non_null(mkdtemp(f->tmp));
}

/* si names func at offset, in symtest.c. */
static void assert_named(const struct sym_info *si, const char *func, uint64_t offset)
{
	assert_non_null(si->func);
	assert_string_equal(si->func, func);
	assert_int_equal(si->offset, offset);
	assert_non_null(si->file);
	assert_string_equal(si->file, "symtest.c");
}

/* symtest-buildid has neither symbols nor a debuglink; its debug file is
 * found only under ROOT/usr/lib/debug/.build-id/xx/rest.debug. */
static void test_buildid_fake_root(void **state)
{
	char dir[PATH_MAX], file[PATH_MAX + 64], *p, *root;
	struct symtest_files f;
	uint64_t alpha, gamma;
	uint8_t id[20];
	size_t id_len;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	size_t i;

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
	assert_int_equal(sym_resolve_module(sy, mod, root, alpha, true, &si), 0);
	assert_non_null(si.func);
	assert_non_null(strstr(si.func, "symtest-buildid!0x"));
	assert_null(si.file);
	assert_int_equal(si.offset, 0);
	assert_int_equal(si.func_start, alpha);
	assert_string_equal(si.module, "symtest-buildid");
	space_module_put(mod);

	/* With it (the module was freed above, so its table is rebuilt). */
	snprintf(dir, sizeof(dir), "%s/usr/lib/debug/.build-id/%02x", root, id[0]);
	snprintf(file, sizeof(file), "mkdir -p '%s'", dir);
	assert_int_equal(system(file), 0);
	assert_int_equal(space_module_open_path(f.bin, &mod), 0);
	p = file + snprintf(file, sizeof(file), "%s/", dir);
	assert_int_equal(mod->build_id_len, id_len);
	for (i = 1; i < id_len; i++)
		p += sprintf(p, "%02x", id[i]);
	strcpy(p, ".debug");
	copy_file(f.dbg, file, 0644);
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
	assert_int_equal(sym_resolve_module(sy, mod, "", beta + 1, true, &si), 0);
	assert_named(&si, "symtest_beta", 1);
	space_module_put(mod);
	sym_free(sy);
	rm_rf(dir);
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
	assert_int_equal(sym_resolve_module(sy, mod, NULL, alpha, true, &a), 0);
	assert_int_equal(sym_resolve_module(sy, mod, NULL, alpha, true, &b), 0);
	assert_string_equal(a.func, "symtest_alpha");
	assert_ptr_equal(a.file, b.file);
	assert_int_equal(a.line, b.line);
	assert_true(a.line > 0);
	/* Before the first function: no symbol, offset is the address. */
	assert_int_equal(sym_resolve_module(sy, mod, NULL, 0x10, false, &a), 0);
	assert_null(a.func);
	assert_int_equal(a.offset, 0x10);
	space_module_put(mod);
	/* Strings outlive the module they came from. */
	assert_string_equal(b.func, "symtest_alpha");
	assert_string_equal(b.module, "symtest");
	sym_free(sy);
}

static void test_demangle(void **state)
{
	char buf[256];
	const char *r;

	r = sym_demangle("_ZN3foo3barEv", buf, sizeof(buf));
	assert_string_equal(r, "foo::bar()");
	r = sym_demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", buf, sizeof(buf));
	assert_string_equal(r, "core::ptr::drop_in_place");
	r = sym_demangle("_ZNK3std6vectorIiSaIiEE4sizeEv", buf, sizeof(buf));
	assert_string_equal(r, "std::vector<int, std::allocator<int> >::size() const");
	/* Not mangled: the same pointer back. */
	r = sym_demangle("main", buf, sizeof(buf));
	assert_string_equal(r, "main");
	r = sym_demangle("_Zgarbage", buf, sizeof(buf));
	assert_string_equal(r, "_Zgarbage");
	/* Truncated to the buffer, still terminated. */
	r = sym_demangle("_ZN3foo3barEv", buf, 6);
	assert_string_equal(r, "foo::");
}

static void test_perfmap_parse(void **state)
{
	uint64_t start, size;
	const char *name;

	assert_int_equal(sym_perfmap_parse_line("7f0012340000 1a0 LazyCompile:~foo bar.js:3",
						&start, &size, &name),
			 0);
	assert_int_equal(start, 0x7f0012340000ull);
	assert_int_equal(size, 0x1a0);
	assert_string_equal(name, "LazyCompile:~foo bar.js:3");
	assert_int_equal(sym_perfmap_parse_line("ABCdef 10 x", &start, &size, &name), 0);
	assert_int_equal(start, 0xabcdef);
	assert_string_equal(name, "x");
	/* Bad lines. */
	assert_int_equal(sym_perfmap_parse_line("1000 name", &start, &size, &name), -EINVAL);
	assert_int_equal(sym_perfmap_parse_line("1000", &start, &size, &name), -EINVAL);
	assert_int_equal(sym_perfmap_parse_line("zz00 10 name", &start, &size, &name), -EINVAL);
	assert_int_equal(sym_perfmap_parse_line("1000 1g name", &start, &size, &name), -EINVAL);
	assert_int_equal(sym_perfmap_parse_line("1000 10 ", &start, &size, &name), -EINVAL);
	assert_int_equal(sym_perfmap_parse_line("1000 10", &start, &size, &name), -EINVAL);
	assert_int_equal(sym_perfmap_parse_line("", &start, &size, &name), -EINVAL);
	/* perf itself reads these with strtoull(.., 16): a 0x prefix passes. */
	assert_int_equal(sym_perfmap_parse_line("0x1000 10 name", &start, &size, &name), 0);
	assert_int_equal(start, 0x1000);
	assert_int_equal(sym_perfmap_parse_line("100000000000000000 10 name", &start, &size, &name),
			 -EINVAL);
}

static void perfmap_file(const char *root, int nspid, const char *text, uid_t owner)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", root, nspid);
	write_file(path, text);
	assert_int_equal(chown(path, owner, owner), 0);
}

static const char jit_map[] = "1000 100 jit_one\n"
			      "garbage line\n"
			      "2000 0 zero_size\n"
			      "3000 100 _ZN3foo3barEv\n"
			      "3080 10 jit_later_wins\n"
			      "4000 10\n";

static void test_perfmap_trust_and_lookup(void **state)
{
	char root[] = "/tmp/symtest-pmXXXXXX", path[PATH_MAX + 64], path2[PATH_MAX + 64];
	struct sym_info si;
	struct sym *sy;

	if (geteuid() != 0) {
		fprintf(stderr, "test_perfmap_trust_and_lookup needs root (chown)\n");
		skip();
	}
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 01777), 0);
	assert_int_equal(sym_new(&sy), 0);

	/* Owned by someone else than the target (uid 1000) and not root. */
	perfmap_file(root, 4242, jit_map, 12345);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4242, 1000, 0x1010, &si), -ENOENT);
	/* Owned by the target's uid; and by root. */
	perfmap_file(root, 4243, jit_map, 1000);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4243, 1000, 0x1010, &si), 0);
	assert_string_equal(si.func, "jit_one");
	assert_string_equal(si.module, "[jit]");
	assert_true(si.jit);
	assert_int_equal(si.offset, 0x10);
	assert_int_equal(si.func_start, 0x1000);
	perfmap_file(root, 4244, jit_map, 0);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0x10ff, &si), 0);
	assert_string_equal(si.func, "jit_one");
	/* Past the end, zero size, bad lines: nothing. */
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0x1100, &si), -ENOENT);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0x2000, &si), -ENOENT);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0x4000, &si), -ENOENT);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0xfff, &si), -ENOENT);
	/* Demangled; and a later overlapping entry wins. */
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0x3010, &si), 0);
	assert_string_equal(si.func, "foo::bar()");
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4244, 1000, 0x3088, &si), 0);
	assert_string_equal(si.func, "jit_later_wins");
	assert_int_equal(si.offset, 8);

	/* A symlink to a trusted file is refused, and so is a FIFO (without
	 * blocking on it). */
	snprintf(path, sizeof(path), "%s/tmp/perf-4245.map", root);
	assert_int_equal(symlink("perf-4244.map", path), 0);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4245, 1000, 0x1010, &si), -ENOENT);
	snprintf(path, sizeof(path), "%s/tmp/perf-4246.map", root);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4246, 0, 0x1010, &si), -ENOENT);
	/* A symlinked directory pointing outside the root resolves inside it. */
	snprintf(path, sizeof(path), "%s/tmp", root);
	snprintf(path2, sizeof(path2), "%s/tmp2", root);
	assert_int_equal(rename(path, path2), 0);
	assert_int_equal(symlink(path2, path), 0); /* absolute: outside when in root */
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4247, 0, 0x1010, &si), -ENOENT);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rename(path2, path), 0);

	/* Reload when the file changes (checked at most once a second). */
	perfmap_file(root, 4243, "1000 100 jit_renamed\n5000 10 jit_new\n", 1000);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4243, 1000, 0x5004, &si), -ENOENT);
	usleep(1100 * 1000);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4243, 1000, 0x5004, &si), 0);
	assert_string_equal(si.func, "jit_new");
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4243, 1000, 0x1004, &si), 0);
	assert_string_equal(si.func, "jit_renamed");
	sym_free(sy);
	rm_rf(root);
}

/* ---- hostile debug files and perf maps ---------------------------------- */

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

/* A FIFO at the build-id path and at the debuglink path: neither is ever
 * opened (a device node there would run its driver's open as root). */
static void test_debug_fifo_never_opened(void **state)
{
	char dir[PATH_MAX], file[PATH_MAX + 64], *p;
	struct symtest_files f;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	pid_t writer;
	size_t i;

	symtest_files(&f, "symtest-buildid");
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(space_module_open_path(f.bin, &mod), 0);
	snprintf(dir, sizeof(dir), "%s/usr/lib/debug/.build-id/%02x", f.tmp, mod->build_id[0]);
	snprintf(file, sizeof(file), "mkdir -p '%s'", dir);
	assert_int_equal(system(file), 0);
	p = file + snprintf(file, sizeof(file), "%s/", dir);
	for (i = 1; i < mod->build_id_len; i++)
		p += sprintf(p, "%02x", mod->build_id[i]);
	strcpy(p, ".debug");
	assert_int_equal(mkfifo(file, 0644), 0);
	writer = fifo_writer(file);
	alarm(10);
	assert_int_equal(sym_resolve_module(sy, mod, f.tmp, 0x1000, true, &si), 0);
	alarm(0);
	assert_null(si.func);
	assert_fifo_unopened(writer);
	space_module_put(mod);
	rm_rf(f.tmp);

	symtest_files(&f, "symtest-debuglink");
	snprintf(file, sizeof(file), "%s/symtest-debuglink", f.tmp);
	copy_file(f.bin, file, 0755);
	assert_int_equal(space_module_open_path(file, &mod), 0);
	snprintf(file, sizeof(file), "%s/symtest-debuglink.debug", f.tmp);
	assert_int_equal(mkfifo(file, 0644), 0);
	writer = fifo_writer(file);
	alarm(10);
	assert_int_equal(sym_resolve_module(sy, mod, "", 0x1000, true, &si), 0);
	alarm(0);
	assert_fifo_unopened(writer);
	space_module_put(mod);
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
	assert_int_equal(sym_resolve_module(sy, mod, "", 0x1000, true, &si), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_null(si.func);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1000);
	space_module_put(mod);
	sym_free(sy);
	rm_rf(f.tmp);
}

/* A perf map over TFILE_PERFMAP_MAX (64 MiB) is not read at all, even
 * when its first lines are good. */
static void test_perfmap_size_cap(void **state)
{
	char root[] = "/tmp/symtest-pmcapXXXXXX", path[PATH_MAX + 64];
	struct sym_info si;
	struct sym *sy;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 01777), 0);
	perfmap_file(root, 4250, "1000 100 jit_one\n", 0);
	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4250, 0, 0x1010, &si), 0);
	perfmap_file(root, 4251, "1000 100 jit_one\n", 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-4251.map", root);
	assert_int_equal(truncate(path, (off_t)(64ull << 20) + 1), 0);
	assert_int_equal(sym_perfmap_lookup_at(sy, root, 4251, 0, 0x1010, &si), -ENOENT);
	sym_free(sy);
	rm_rf(root);
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
	write_file(path, "10000 40 jitted_thing\n");
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(space_load(&s, c.pid), 0);
	assert_null(space_find(&s, 0x10010));
	assert_int_equal(sym_resolve_user(sy, &s, 0x10010, true, &si), 0);
	assert_non_null(si.func);
	assert_string_equal(si.func, "jitted_thing");
	assert_string_equal(si.module, "[jit]");
	assert_int_equal(si.offset, 0x10);
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
	struct sym_info si;
	struct sym *sy;

	assert_int_equal(sym_new(&sy), 0);
	assert_int_equal(sym_kallsyms_parse(sy, text), 0);
	assert_int_equal(sym_resolve_kernel(sy, 0xffffffff81000150ull, &si), 0);
	assert_non_null(si.func);
	assert_string_equal(si.func, "do_one_initcall");
	assert_string_equal(si.module, "[kernel]");
	assert_true(si.kernel);
	assert_int_equal(si.offset, 0x50);
	assert_int_equal(si.func_start, 0xffffffff81000100ull);
	/* Data symbols are not functions: do_one_initcall runs to schedule. */
	assert_int_equal(sym_resolve_kernel(sy, 0xffffffff81000250ull, &si), 0);
	assert_string_equal(si.func, "do_one_initcall");
	assert_int_equal(sym_resolve_kernel(sy, 0xffffffff81000301ull, &si), 0);
	assert_string_equal(si.func, "schedule");
	assert_int_equal(sym_resolve_kernel(sy, 0xffffffffc0001004ull, &si), 0);
	assert_string_equal(si.func, "ext4_readpage");
	assert_int_equal(sym_resolve_kernel(sy, 0xffffffff80000000ull, &si), 0);
	assert_null(si.func);
	assert_string_equal(si.module, "[kernel]");

	assert_int_equal(sym_kallsyms_parse(sy, zero), 0);
	assert_int_equal(sym_resolve_kernel(sy, 0xffffffff81000150ull, &si), 0);
	assert_null(si.func);
	assert_string_equal(si.module, "[kernel]");
	assert_true(si.kernel);
	assert_int_equal(si.offset, 0xffffffff81000150ull);
	sym_free(sy);
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

static void test_cost(void **state)
{
	struct space s = {0};
	struct sym_info si;
	struct timespec t0, t1;
	struct sym *sy;
	struct child c;
	uint64_t pcs[3];
	double ns;
	int i;

	assert_int_equal(sym_new(&sy), 0);
	child_start("symtest", &c);
	assert_int_equal(space_load(&s, c.pid), 0);
	for (i = 0; i < 3; i++) {
		pcs[i] = c.fns[i].addr + 3;
		assert_int_equal(sym_resolve_user(sy, &s, pcs[i], true, &si), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100000; i++)
		assert_int_equal(sym_resolve_user(sy, &s, pcs[i % 3], false, &si), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e5;
	printf("sym_resolve_user warm: %.0f ns/lookup\n", ns);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 100000; i++)
		assert_int_equal(sym_resolve_user(sy, &s, pcs[i % 3], true, &si), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e5;
	printf("sym_resolve_user warm with lines: %.0f ns/lookup\n", ns);
	assert_string_equal(si.file, "symtest.c");
	space_release(&s);
	child_stop(&c);
	sym_free(sy);
}

/* A pc in the PLT has no symbol; it is named [plt], not left as a bare
 * offset. */
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
	assert_string_equal(si.func, "[plt]");
	assert_int_equal(si.offset, 4);
	sym_free(sy);
	space_module_put(mod);
}

/* ---- function ranges (FDEs) and inline chains (issue 12) ---- */

struct bytes {
	uint8_t b[1024];
	size_t n;
};

static void put(struct bytes *b, uint64_t v, int len)
{
	for (int i = 0; i < len; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

static void patch_len(struct bytes *b, size_t at)
{
	while ((b->n - at) % 4)
		put(b, 0, 1); /* DW_CFA_nop */
	uint64_t len = b->n - at - 4;
	for (int i = 0; i < 4; i++)
		b->b[at + (size_t)i] = (uint8_t)(len >> (8 * i));
}

/* A .eh_frame CIE with augmentation "zR", FDE pointers pc-relative sdata4. */
static size_t eh_cie(struct bytes *b)
{
	size_t at = b->n;

	put(b, 0, 4); /* length, patched */
	put(b, 0, 4); /* CIE id */
	put(b, 1, 1); /* version */
	memcpy(b->b + b->n, "zR", 3);
	b->n += 3;
	put(b, 1, 1);	 /* code alignment */
	put(b, 0x78, 1); /* data alignment -8 */
	put(b, 16, 1);	 /* return address register */
	put(b, 1, 1);	 /* augmentation data length */
	put(b, 0x1b, 1); /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	patch_len(b, at);
	return at;
}

/* An FDE of cie for [start, start + len); returns its offset. */
static size_t eh_fde(struct bytes *b, size_t cie, uint64_t sec, uint64_t start, uint32_t len)
{
	size_t at = b->n, pc;

	put(b, 0, 4);
	put(b, b->n - cie, 4); /* CIE pointer: back from this field */
	pc = b->n;
	put(b, (uint32_t)(start - (sec + pc)), 4);
	put(b, len, 4);
	put(b, 0, 1); /* augmentation data length */
	patch_len(b, at);
	return at;
}

static void test_fde_parse(void **state)
{
	struct bytes b = {0}, d = {0};
	struct sym_range *r;
	size_t n, cie, k, f1;

	(void)state;
	/* .eh_frame at 0x2000: two FDEs out of order, a zero terminator. */
	cie = eh_cie(&b);
	f1 = eh_fde(&b, cie, 0x2000, 0x1100, 0x40);
	eh_fde(&b, cie, 0x2000, 0x1000, 0x80);
	put(&b, 0, 4);
	assert_int_equal(sym_fde_parse(b.b, b.n, 0x2000, false, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].start, 0x1000);
	assert_int_equal(r[0].end, 0x1080);
	assert_int_equal(r[1].start, 0x1100);
	assert_int_equal(r[1].end, 0x1140);
	free(r);
	/* Every truncation reads what it can and no further. */
	for (k = 0; k < b.n; k++) {
		assert_int_equal(sym_fde_parse(b.b, k, 0x2000, false, &r, &n), 0);
		assert_true(n <= 2);
		free(r);
	}
	/* An FDE whose CIE pointer leads to no CIE is skipped, not trusted. */
	b.b[f1 + 4] += 4;
	assert_int_equal(sym_fde_parse(b.b, b.n, 0x2000, false, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x1000);
	free(r);

	/* An old "eh" CIE whose 8-byte EH pointer runs past its entry: its
	 * FDEs are skipped, nothing is read beyond the entry. */
	memset(&b, 0, sizeof(b));
	put(&b, 9, 4);
	put(&b, 0, 4);
	put(&b, 1, 1);
	memcpy(b.b + b.n, "eh", 3);
	b.n += 3;
	put(&b, 0, 1);
	eh_fde(&b, 0, 0x2000, 0x1000, 0x20);
	assert_int_equal(sym_fde_parse(b.b, b.n, 0x2000, false, &r, &n), 0);
	assert_int_equal(n, 0);
	free(r);

	/* .debug_frame: CIE id 0xffffffff, absolute 8-byte addresses. */
	put(&d, 0, 4);
	put(&d, 0xffffffffu, 4);
	put(&d, 1, 1);
	put(&d, 0, 1); /* augmentation "" */
	put(&d, 1, 1);
	put(&d, 0x78, 1);
	put(&d, 16, 1);
	patch_len(&d, 0);
	size_t at = d.n;
	put(&d, 0, 4);
	put(&d, 0, 4); /* CIE pointer: offset of the CIE in the section */
	put(&d, 0x401000, 8);
	put(&d, 0x30, 8);
	patch_len(&d, at);
	assert_int_equal(sym_fde_parse(d.b, d.n, 0, true, &r, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].start, 0x401000);
	assert_int_equal(r[0].end, 0x401030);
	free(r);
}

/* A stripped binary: every pc of inl_outer is one function, named by its
 * FDE as "module!0xFILEOFF" (this PIE's text has file offset == address). */
static void test_stripped_by_fde(void **state)
{
	char full[PATH_MAX], bin[PATH_MAX], want[128];
	const struct sym_module_note *notes;
	struct module *mod;
	struct sym_info si;
	struct sym *sy;
	uint64_t outer, a;
	size_t nn, i;
	bool noted = false;

	(void)state;
	target_path(full, sizeof(full), "inltest");
	target_path(bin, sizeof(bin), "inltest-stripped");
	outer = elf_symbol(full, "inl_outer");
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

/* The line of the first occurrence of text in the target's source. */
static int source_line(const char *text)
{
	char path[PATH_MAX + 64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/../../tests/targets/inltest.c", targets_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, text)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail();
	return 0;
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fde_parse),
	    cmocka_unit_test(test_stripped_by_fde),
	    cmocka_unit_test(test_inline_chain),
	    cmocka_unit_test(test_plt),
	    cmocka_unit_test(test_demangle),
	    cmocka_unit_test(test_perfmap_parse),
	    cmocka_unit_test(test_kallsyms),
	    cmocka_unit_test(test_kallsyms_real),
	    cmocka_unit_test(test_live_full),
	    cmocka_unit_test(test_live_stripped),
	    cmocka_unit_test(test_live_debuglink),
	    cmocka_unit_test(test_module_lines_cached),
	    cmocka_unit_test(test_buildid_fake_root),
	    cmocka_unit_test(test_debuglink_crc_and_subdir),
	    cmocka_unit_test(test_perfmap_trust_and_lookup),
	    cmocka_unit_test(test_perfmap_live),
	    cmocka_unit_test(test_debug_fifo_never_opened),
	    cmocka_unit_test(test_debuglink_sparse_capped),
	    cmocka_unit_test(test_perfmap_size_cap),
	    cmocka_unit_test(test_self),
	    cmocka_unit_test(test_cost),
	};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	/* build/tests/test_sym -> build/targets */
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(targets_dir, sizeof(targets_dir), "%.900s/../targets", exe);
	} else {
		snprintf(targets_dir, sizeof(targets_dir), "build/targets");
	}
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
