/*
 * test_space — maps parsing, module opening, bias and build-id, checked
 * against this very process and against the ELF files read a second way.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/unwind/space.h"
#include "helpers.h"

static const char maps_text[] =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
    "55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 1234                       /usr/bin/prog\n"
    "this line is not a mapping\n"
    "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000001000 rw-s 00000000 00:05 42                         /dev/shm/a b  c\n"
    "7f0000002000-7f0000003000 r-xp 00001000 fd:02 99                         /opt/old lib.so "
    "(deleted)\n"
    "7f0000004000-7f0000005000 ---p 00000000 00:00 0 \n"
    "7f0000005000-7f0000004000 r--p 00000000 00:00 0\n" /* end < start */
    "7f0000006000-7f0000007000 rwzp 00000000 00:00 0\n" /* bad perms */
    "7f0000008000-7f0000009000 r--p 00000000 00:00\n"	/* no inode */
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
    "7f0000003000-7f0000004000 r--p 00000000 00:00 0"; /* unsorted, no newline */

static void test_parse_maps(void **state)
{
	struct mapping *m;
	size_t n, i;

	assert_int_equal(space_parse_maps(maps_text, &m, &n), 0);
	assert_int_equal(n, 8);
	for (i = 1; i < n; i++)
		assert_true(m[i - 1].end <= m[i].start);

	assert_int_equal(m[0].start, 0x55d0c0a00000ULL);
	assert_int_equal(m[0].end, 0x55d0c0a02000ULL);
	assert_int_equal(m[0].prot, PROT_READ);
	assert_string_equal(m[0].path, "/usr/bin/prog");
	assert_int_equal(m[1].prot, PROT_READ | PROT_EXEC);
	assert_int_equal(m[1].pgoff, 0x2000);
	assert_int_equal(m[1].dev_major, 8);
	assert_int_equal(m[1].dev_minor, 1);
	assert_int_equal(m[1].ino, 1234);
	assert_null(m[1].mod);

	assert_string_equal(m[2].path, "[heap]");
	assert_int_equal(m[2].prot, PROT_READ | PROT_WRITE);

	assert_string_equal(m[3].path, "/dev/shm/a b  c");
	assert_int_equal(m[3].ino, 42);

	assert_string_equal(m[4].path, "/opt/old lib.so (deleted)");
	assert_int_equal(m[4].dev_major, 0xfd);
	assert_int_equal(m[4].dev_minor, 2);
	assert_int_equal(m[4].pgoff, 0x1000);

	assert_int_equal(m[5].start, 0x7f0000003000ULL); /* sorted into place */
	assert_null(m[5].path);
	assert_int_equal(m[6].start, 0x7f0000004000ULL);
	assert_int_equal(m[6].prot, 0);
	assert_null(m[6].path); /* trailing blank is not a path */
	assert_string_equal(m[7].path, "[stack]");
	space_free_mappings(m, n);

	assert_int_equal(space_parse_maps("", &m, &n), 0);
	assert_int_equal(n, 0);
	space_free_mappings(m, n);
	assert_int_equal(space_parse_maps("garbage\n\n-\n", &m, &n), 0);
	assert_int_equal(n, 0);
	space_free_mappings(m, n);
}

static void test_find(void **state)
{
	struct space s = {0};

	assert_int_equal(space_parse_maps(maps_text, &s.maps, &s.nmaps), 0);
	assert_ptr_equal(space_find(&s, 0x55d0c0a00000ULL), &s.maps[0]);
	assert_ptr_equal(space_find(&s, 0x55d0c0a01fffULL), &s.maps[0]);
	assert_ptr_equal(space_find(&s, 0x55d0c0a02000ULL), &s.maps[1]);
	assert_ptr_equal(space_find(&s, 0x7ffd00020fffULL), &s.maps[7]);
	assert_null(space_find(&s, 0x7ffd00021000ULL));
	assert_null(space_find(&s, 0x1000));
	assert_null(space_find(&s, 0x55d0c0a05000ULL)); /* gap before [heap] */
	space_free_mappings(s.maps, s.nmaps);
}

/* ---- a second way to read ELF files ------------------------------------- */

/* st_value of a defined function symbol, from .symtab or .dynsym. */
static int elf_sym_value(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY), found = -1;
	GElf_Sym sym;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && (elf_find_symbol(elf, SHT_SYMTAB, STT_FUNC, name, &sym) == 0 ||
		    elf_find_symbol(elf, SHT_DYNSYM, STT_FUNC, name, &sym) == 0)) {
		*value = sym.st_value;
		found = 0;
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* Build-id from the raw bytes of the .note.gnu.build-id section. */
static int raw_build_id(const char *path, uint8_t *id, size_t *len)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstr;
	int ret = -1;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstr))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint32_t hdr[3];
		uint8_t buf[256];

		if (!gelf_getshdr(scn, &sh) ||
		    strcmp(elf_strptr(elf, shstr, sh.sh_name), ".note.gnu.build-id"))
			continue;
		if (sh.sh_size > sizeof(buf) ||
		    pread(fd, buf, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size)
			break;
		memcpy(hdr, buf, sizeof(hdr));
		if (hdr[0] != 4 || hdr[2] != NT_GNU_BUILD_ID || memcmp(buf + 12, "GNU", 4) ||
		    hdr[1] > 20)
			break;
		memcpy(id, buf + 16, hdr[1]);
		*len = hdr[1];
		ret = 0;
		break;
	}
out:
	elf_end(elf);
	close(fd);
	return ret;
}

/* ---- live process ------------------------------------------------------- */

__attribute__((noinline)) int space_test_marker(int x)
{
	return x * 3 + 1;
}

static void check_symbol(const struct space *s, uint64_t pc, const char *name,
			 const char *want_in_path)
{
	const struct mapping *m = space_find(s, pc);
	uint64_t value = 0;

	assert_non_null(m);
	assert_non_null(m->path);
	assert_non_null(strstr(m->path, want_in_path));
	assert_true(m->prot & PROT_EXEC);
	assert_non_null(m->mod);
	assert_non_null(m->mod->elf);
	assert_true(m->mod->refs >= 1);
	assert_int_equal(elf_sym_value(m->mod->path, name, &value), 0);
	assert_int_equal(pc - m->bias, value);
}

static void test_load_self(void **state)
{
	struct space s = {0};
	const struct mapping *m;

	assert_int_equal(space_load(&s, getpid()), 0);
	assert_int_equal(s.pid, getpid());
	assert_int_equal(s.generation, 1);
	assert_true(s.nmaps > 5);

	check_symbol(&s, (uint64_t)(uintptr_t)&space_test_marker, "space_test_marker",
		     "test_space");
	m = space_find(&s, (uint64_t)(uintptr_t)&space_test_marker);
	assert_int_equal(m->mod->e_type, ET_DYN); /* Debian's gcc builds PIE */
	assert_string_equal(m->mod->name, "test_space");

	check_symbol(&s, (uint64_t)(uintptr_t)&qsort, "qsort", "libc.so");
	m = space_find(&s, (uint64_t)(uintptr_t)&qsort);
	assert_string_equal(m->mod->name, "libc.so.6");
	assert_true(m->mod->ino != 0);

	/* Anonymous and non-executable mappings get no module. */
	m = space_find(&s, (uint64_t)(uintptr_t)&s);
	assert_non_null(m);
	assert_false(m->prot & PROT_EXEC);
	assert_null(m->mod);

	space_release(&s);
	assert_null(s.maps);
	assert_int_equal(s.nmaps, 0);
}

static void test_build_id(void **state)
{
	struct space s = {0};
	uint8_t id[20];
	size_t len = 0;
	const struct mapping *m;

	assert_int_equal(space_load(&s, getpid()), 0);
	m = space_find(&s, (uint64_t)(uintptr_t)&qsort);
	assert_non_null(m);
	assert_int_equal(raw_build_id(m->mod->path, id, &len), 0);
	assert_int_equal(m->mod->build_id_len, len);
	assert_memory_equal(m->mod->build_id, id, len);

	m = space_find(&s, (uint64_t)(uintptr_t)&space_test_marker);
	assert_int_equal(raw_build_id(m->mod->path, id, &len), 0);
	assert_int_equal(m->mod->build_id_len, 20);
	assert_memory_equal(m->mod->build_id, id, len);
	space_release(&s);
}

static void test_vdso(void **state)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), value = 0;
	struct space s = {0};
	const struct mapping *m;
	GElf_Sym sym;

	if (!base)
		skip();
	assert_int_equal(space_load(&s, getpid()), 0);
	m = space_find(&s, base);
	assert_non_null(m);
	assert_string_equal(m->path, "[vdso]");
	assert_non_null(m->mod);
	assert_non_null(m->mod->elf);
	assert_int_equal(m->mod->e_type, ET_DYN);
	assert_true(m->mod->build_id_len > 0);
	/* __vdso_clock_gettime's address must fall inside the mapping. */
	if (elf_find_symbol(m->mod->elf, SHT_DYNSYM, -1, "__vdso_clock_gettime", &sym) == 0)
		value = sym.st_value;
	assert_true(value != 0);
	assert_ptr_equal(space_find(&s, value + m->bias), m);
	space_release(&s);
}

static void test_reload_shares_modules(void **state)
{
	struct space s = {0};
	const struct mapping *m;
	struct module *libc, *again;
	int refs;

	assert_int_equal(space_load(&s, getpid()), 0);
	m = space_find(&s, (uint64_t)(uintptr_t)&qsort);
	libc = m->mod;
	refs = libc->refs;
	assert_int_equal(space_load(&s, getpid()), 0);
	assert_int_equal(s.generation, 1); /* nothing executable changed */
	m = space_find(&s, (uint64_t)(uintptr_t)&qsort);
	assert_ptr_equal(m->mod, libc);
	assert_int_equal(libc->refs, refs);

	/* New executable memory (a JIT's code) is a change; so is its unmap. */
	{
		void *code =
		    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		assert_true(code != MAP_FAILED);
		assert_int_equal(space_load(&s, getpid()), 0);
		assert_int_equal(s.generation, 2);
		assert_non_null(space_find(&s, (uint64_t)(uintptr_t)code));
		assert_null(space_find(&s, (uint64_t)(uintptr_t)code)->mod);
		munmap(code, 4096);
		assert_int_equal(space_load(&s, getpid()), 0);
		assert_int_equal(s.generation, 3);
		/* Non-executable memory is not. */
		code = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_int_equal(space_load(&s, getpid()), 0);
		assert_int_equal(s.generation, 3);
		munmap(code, 4096);
	}
	m = space_find(&s, (uint64_t)(uintptr_t)&qsort);
	assert_ptr_equal(m->mod, libc);
	assert_int_equal(libc->refs, refs);

	/* Opening by path copies the code too (offline annotate), which a
	 * live module's image has not: a module of its own, then shared by
	 * the next open by path, one more reference each. */
	assert_int_equal(space_module_open_path(libc->path, &again), 0);
	assert_ptr_not_equal(again, libc);
	assert_int_equal(libc->refs, refs);
	{
		struct module *third = NULL;

		assert_int_equal(space_module_open_path(libc->path, &third), 0);
		assert_ptr_equal(third, again);
		assert_int_equal(again->refs, 2);
		space_module_put(third);
	}
	space_module_put(again);
	assert_int_equal(libc->refs, refs);
	space_release(&s);
	assert_int_equal(s.generation, 4);
	space_release(&s); /* twice is harmless */
	assert_int_equal(s.generation, 4);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Modules keep no file descriptor (a target with thousands of mapped files
 * must not exhaust ours), yet their ELF stays readable. */
static void test_modules_hold_no_fd(void **state)
{
	struct space s = {0};
	const struct mapping *m;
	int before = count_fds();

	assert_int_equal(space_load(&s, getpid()), 0);
	assert_int_equal(count_fds(), before);
	m = space_find(&s, (uint64_t)(uintptr_t)&qsort);
	assert_non_null(m);
	assert_non_null(m->mod->elf);
	check_symbol(&s, (uint64_t)(uintptr_t)&qsort, "qsort", "libc.so");
	space_release(&s);
}

/* A target that rewrites its vDSO gets a module of its own: another
 * process's (here our own) vDSO module is not the poisoned one. */
static void test_vdso_rewritten_not_shared(void **state)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct space mine = {0}, theirs = {0};
	const struct mapping *a, *b;
	int ready[2];
	pid_t pid;
	char c;

	if (!base)
		skip();
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	if (pid == 0) {
		/* The last byte of the first page, inside the image, written
		 * through /proc/self/mem (which writes read-only pages). */
		char byte = (char)(((char *)(uintptr_t)base)[4095] ^ 0x5a);
		int fd = open("/proc/self/mem", O_RDWR);

		if (fd < 0 || pwrite(fd, &byte, 1, (off_t)base + 4095) != 1)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_int_equal(space_load(&theirs, pid), 0);
	assert_int_equal(space_load(&mine, getpid()), 0);
	a = space_find(&theirs, base);
	b = space_find(&mine, base);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(a->mod);
	assert_non_null(b->mod);
	assert_ptr_not_equal(a->mod, b->mod);
	space_release(&theirs);
	space_release(&mine);
}

static int ext_freed;
static void count_free(void *p)
{
	ext_freed += *(int *)p;
	free(p);
}

static void test_module_put_frees_ext(void **state)
{
	struct module *m;
	int *v = malloc(sizeof(*v));

	assert_int_equal(space_module_open_path("/proc/self/exe", &m), 0);
	assert_non_null(m->elf);
	assert_int_equal(m->refs, 1);
	*v = 7;
	m->ext[SPACE_EXT_SYM] = v;
	m->ext_free[SPACE_EXT_SYM] = count_free;
	ext_freed = 0;
	space_module_put(m);
	assert_int_equal(ext_freed, 7);

	assert_int_equal(space_module_open_path("/nonexistent/file", &m), -ENOENT);
	/* Not an ELF: a module without an Elf. (A procfs file is refused
	 * outright: tfile opens nothing on a pseudo file system.) */
	char text[] = "/tmp/test_space_text.XXXXXX";
	int fd = mkstemp(text);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_int_equal(space_module_open_path(text, &m), 0);
	assert_null(m->elf);
	space_module_put(m);
	unlink(text);
	assert_int_equal(space_module_open_path("/proc/self/maps", &m), -EPERM);
}

static void test_gone_process(void **state)
{
	struct space s = {0};
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(space_load(&s, pid), -ESRCH);
	assert_null(s.maps);
	assert_int_equal(space_load(&s, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_parse_maps),
	    TEST(test_find),
	    TEST(test_load_self),
	    TEST(test_build_id),
	    TEST(test_vdso),
	    TEST(test_reload_shares_modules),
	    TEST(test_module_put_frees_ext),
	    TEST(test_gone_process),
	    TEST(test_modules_hold_no_fd),
	    TEST(test_vdso_rewritten_not_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
