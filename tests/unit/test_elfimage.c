/* Unit tests for elfimage (a compact in-memory copy of an ELF file) and
 * mountinfo (which mounts are FUSE or network): the copy has the symbol
 * table, the CFI and the build-id of the file and no code unless asked; a
 * file truncated under its section table, or before its header ends,
 * gives a header-only image or an error, never a fault; the cap drops
 * DWARF first, then refuses; a file truncated after the copy changes
 * nothing. mountinfo: a sample text classified by device and by path. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/elfsec.h"
#include "stacktop/proc/mountinfo.h"

#define INLTEST "build/targets/inltest"

/* A private copy of path (the test truncates it); its fd, name in tmpl. */
static int copy_of(const char *path, char *tmpl)
{
	char buf[65536];
	int in = open(path, O_RDONLY), out = mkstemp(tmpl);
	ssize_t r;

	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)r), r);
	close(in);
	return out;
}

static Elf *image(int fd, unsigned flags, uint64_t cap, int want)
{
	Elf *e = NULL;

	assert_int_equal(elfimage_open(fd, flags, cap, &e), want);
	return e;
}

static bool section_has_bytes(Elf *e, const char *name)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsec_find(e, name, &sh);
	Elf_Data *d;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return false;
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size == sh.sh_size;
}

static void test_copy_has_what_is_read(void **state)
{
	uint8_t id[20], id2[20];
	int fd = open(INLTEST, O_RDONLY);
	Elf *file, *e, *c;
	GElf_Shdr sh;

	(void)state;
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	file = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(file);
	e = image(fd, ELFIMAGE_NAMES | ELFIMAGE_DWARF, ELFIMAGE_MAX, 0);
	assert_true(elfsec_has_symtab(e));
	assert_true(elfsec_has_dwarf(e));
	assert_true(section_has_bytes(e, ".eh_frame"));
	assert_true(section_has_bytes(e, ".eh_frame_hdr"));
	assert_true(section_has_bytes(e, ".debug_line"));
	/* code: its header and address, no bytes */
	assert_non_null(elfsec_find(e, ".text", &sh));
	assert_int_equal(sh.sh_type, SHT_NOBITS);
	assert_true(sh.sh_addr != 0 && sh.sh_size != 0);
	assert_false(section_has_bytes(e, ".rodata"));
	/* the build-id through the PT_NOTE segment, as from the file */
	size_t n = elfsec_build_id(e, id, sizeof(id));
	assert_true(n > 0);
	assert_int_equal(elfsec_build_id(file, id2, sizeof(id2)), n);
	assert_memory_equal(id, id2, n);
	/* PT_LOAD keeps its file offsets: same file offset for an address */
	assert_int_equal(elfsec_file_offset(e, sh.sh_addr), elfsec_file_offset(file, sh.sh_addr));
	/* with code: .text is the file's */
	c = image(fd, ELFIMAGE_NAMES | ELFIMAGE_CODE, ELFIMAGE_MAX, 0);
	assert_true(section_has_bytes(c, ".text"));
	{
		Elf_Data *a = elf_getdata(elfsec_find(c, ".text", &sh), NULL);
		Elf_Data *b = elf_getdata(elfsec_find(file, ".text", &sh), NULL);

		assert_int_equal(a->d_size, b->d_size);
		assert_memory_equal(a->d_buf, b->d_buf, a->d_size);
	}
	/* smaller than the file */
	size_t ilen, flen;
	elf_rawfile(e, &ilen);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	flen = (size_t)st.st_size;
	assert_true(ilen < flen);
	elfimage_close(c);
	elfimage_close(e);
	/* flags 0: headers and section names (goheap asks "is it Go?"), not
	 * a refusal */
	e = image(fd, 0, ELFIMAGE_MAX, 0);
	assert_non_null(elfsec_find(e, ".text", &sh));
	assert_false(section_has_bytes(e, ".eh_frame"));
	elfimage_close(e);
	elf_end(file);
	close(fd);
}

/* A compressed DWARF section inflated in an image reads as the file's
 * uncompressed one (objcopy compresses a copy of inltest). */
static void test_inflate(void **state)
{
	char tmpl[] = "/tmp/stacktop-zdebug-XXXXXX", cmd[256];
	int fd = mkstemp(tmpl), plain = open(INLTEST, O_RDONLY), n = 0;
	Elf *file, *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, fsh;

	assert_true(fd >= 0 && plain >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib %s %s", INLTEST, tmpl);
	if (system(cmd) != 0) {
		unlink(tmpl);
		skip();
	}
	fd = open(tmpl, O_RDONLY);
	unlink(tmpl);
	elf_version(EV_CURRENT);
	file = elf_begin(plain, ELF_C_READ, NULL);
	e = image(fd, ELFIMAGE_NAMES | ELFIMAGE_DWARF, ELFIMAGE_MAX, 0);
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		size_t shstrndx;
		assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		Elf_Scn *f = elfsec_find(file, name, &fsh);
		assert_non_null(f);
		assert_int_equal(elfimage_inflate(e, scn), 0);
		assert_true(gelf_getshdr(scn, &sh) && !(sh.sh_flags & SHF_COMPRESSED));
		Elf_Data *a = elf_getdata(scn, NULL), *b = elf_getdata(f, NULL);
		assert_int_equal(a->d_size, b->d_size);
		assert_memory_equal(a->d_buf, b->d_buf, a->d_size);
		n++;
	}
	assert_true(n > 0);
	/* the image's other bytes are untouched */
	Elf_Data *a = elf_getdata(elfsec_find(e, ".eh_frame", &sh), NULL);
	Elf_Data *b = elf_getdata(elfsec_find(file, ".eh_frame", &fsh), NULL);
	assert_true(a && b && a->d_size == b->d_size);
	assert_memory_equal(a->d_buf, b->d_buf, a->d_size);
	elfimage_close(e);
	elf_end(file);
	close(fd);
	close(plain);
}

static void test_truncated(void **state)
{
	char tmpl[] = "/tmp/stacktop-elfimage-XXXXXX";
	int fd = copy_of(INLTEST, tmpl);
	struct stat st;
	Elf *e;

	(void)state;
	unlink(tmpl);
	e = image(fd, ELFIMAGE_NAMES | ELFIMAGE_DWARF, ELFIMAGE_MAX, 0);
	/* truncated after the copy: the copy is ours, every byte readable */
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	{
		Elf_Scn *scn = NULL;
		unsigned long sum = 0;

		while ((scn = elf_nextscn(e, scn))) {
			Elf_Data *d = elf_getdata(scn, NULL);

			for (size_t i = 0; d && d->d_buf && i < d->d_size; i++)
				sum += ((const unsigned char *)d->d_buf)[i];
		}
		assert_true(sum > 0);
	}
	elfimage_close(e);
	/* truncated under its section table: the header only */
	e = image(fd, ELFIMAGE_NAMES, ELFIMAGE_MAX, 0);
	assert_false(elfsec_has_symtab(e));
	assert_null(elf_nextscn(e, NULL));
	elfimage_close(e);
	/* truncated inside its header */
	assert_int_equal(ftruncate(fd, 20), 0);
	assert_null(image(fd, ELFIMAGE_NAMES, ELFIMAGE_MAX, -EIO));
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_null(image(fd, ELFIMAGE_NAMES, ELFIMAGE_MAX, -ENOEXEC));
	close(fd);
}

static void test_cap(void **state)
{
	int fd = open(INLTEST, O_RDONLY);
	struct elfimage_stats a, b;
	size_t full, names;
	Elf *e;

	(void)state;
	const unsigned all = ELFIMAGE_NAMES | ELFIMAGE_DWARF;

	e = image(fd, all, ELFIMAGE_MAX, 0);
	elf_rawfile(e, &full);
	elfimage_close(e);
	/* one byte under: DWARF goes, names and CFI stay */
	elfimage_stats_get(&a);
	e = image(fd, all, full - 1, 0);
	elfimage_stats_get(&b);
	assert_int_equal(b.dwarf_dropped, a.dwarf_dropped + 1);
	assert_false(elfsec_has_dwarf(e));
	assert_true(elfsec_has_symtab(e));
	assert_true(section_has_bytes(e, ".eh_frame"));
	elf_rawfile(e, &names);
	elfimage_close(e);
	/* under even that: no image */
	assert_null(image(fd, all, names - 1, -EFBIG));
	/* DWARF alone, over the cap: nothing left to give */
	assert_null(image(fd, ELFIMAGE_DWARF, names - 1, -EFBIG));
	/* DWARF alone: no symbol table, no CFI */
	e = image(fd, ELFIMAGE_DWARF, ELFIMAGE_MAX, 0);
	assert_true(elfsec_has_dwarf(e));
	assert_false(elfsec_has_symtab(e));
	assert_false(section_has_bytes(e, ".eh_frame"));
	elfimage_close(e);
	/* names only: DWARF left in the file, its header says so */
	e = image(fd, ELFIMAGE_NAMES, ELFIMAGE_MAX, 0);
	assert_false(elfsec_has_dwarf(e));
	assert_true(elfsec_has_symtab(e));
	elfimage_close(e);
	elfimage_stats_get(&a); /* the two refusals above */
	assert_int_equal(a.refused, b.refused + 2);
	close(fd);
}

/* Names and CFI read later: laid out, zero until filled; a fill from a
 * file that shrank leaves them SHT_NOBITS, seen through libelf. */
static void test_later(void **state)
{
	char tmpl[] = "/tmp/stacktop-elfimage-XXXXXX";
	int fd = copy_of(INLTEST, tmpl);
	struct elfimage_pending *p;
	GElf_Shdr sh;
	Elf *e;

	(void)state;
	unlink(tmpl);
	assert_int_equal(
	    elfimage_open_later(fd, ELFIMAGE_NAMES, ELFIMAGE_NAMES, ELFIMAGE_MAX, &e, &p), 0);
	assert_non_null(p);
	assert_true(elfsec_build_id(e, (uint8_t[20]){0}, 20) > 0); /* the notes are read now */
	elfimage_fill(e, p, fd);
	assert_true(elfsec_has_symtab(e));
	assert_true(section_has_bytes(e, ".eh_frame"));
	elfimage_close(e);
	/* nothing to read them from: no names, no CFI */
	assert_int_equal(
	    elfimage_open_later(fd, ELFIMAGE_NAMES, ELFIMAGE_NAMES, ELFIMAGE_MAX, &e, &p), 0);
	elfimage_fill(e, p, -1);
	assert_false(elfsec_has_symtab(e));
	assert_non_null(elfsec_find(e, ".eh_frame", &sh));
	assert_int_equal(sh.sh_type, SHT_NOBITS);
	elfimage_close(e);
	/* the file shrank in between: what it lost is SHT_NOBITS */
	assert_int_equal(
	    elfimage_open_later(fd, ELFIMAGE_NAMES, ELFIMAGE_NAMES, ELFIMAGE_MAX, &e, &p), 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	elfimage_fill(e, p, fd);
	assert_false(elfsec_has_symtab(e));
	elfimage_close(e);
	close(fd);
}

static const char sample[] =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "40 22 0:40 / /home/u/my\\040mnt rw,nosuid,nodev shared:7 - fuse.sshfs u@h:/ rw\n"
    "41 22 0:41 / /mnt/fz rw - fuse x rw,user_id=0\n"
    "42 22 0:52 / /srv/nfs rw - nfs4 srv:/export rw\n"
    "43 22 0:53 / /proc rw - proc proc rw\n"
    "garbage line\n"
    "44 22 0:54 / /srv/nfsx rw shared:9 master:2 - ext4 /dev/sdb rw\n";

static void test_mountinfo(void **state)
{
	struct mountinfo mi;

	(void)state;
	assert_int_equal(mountinfo_parse(sample, &mi), 0);
	assert_int_equal(mi.n, 6);
	assert_string_equal(mi.e[1].point, "/home/u/my mnt");
	assert_null(mountinfo_dev_remote(&mi, 8, 1));
	assert_string_equal(mountinfo_dev_remote(&mi, 0, 40), "fuse.sshfs");
	assert_string_equal(mountinfo_dev_remote(&mi, 0, 41), "fuse");
	assert_string_equal(mountinfo_dev_remote(&mi, 0, 52), "nfs4");
	assert_null(mountinfo_dev_remote(&mi, 0, 43));
	assert_null(mountinfo_dev_remote(&mi, 0, 99));
	assert_string_equal(mountinfo_path_remote(&mi, "/mnt/fz/lib.so"), "fuse");
	assert_string_equal(mountinfo_path_remote(&mi, "/mnt/fz"), "fuse");
	assert_null(mountinfo_path_remote(&mi, "/mnt/fzz/lib.so"));
	assert_null(mountinfo_path_remote(&mi, "/srv/nfsx/a"));
	assert_string_equal(mountinfo_path_remote(&mi, "/home/u/my mnt/x.debug"), "fuse.sshfs");
	assert_null(mountinfo_path_remote(&mi, "/usr/lib/debug/.build-id/ab/cd.debug"));
	assert_true(mountinfo_type_remote("fuseblk"));
	assert_true(mountinfo_type_remote("cifs"));
	assert_false(mountinfo_type_remote("fusectl"));
	assert_false(mountinfo_type_remote("overlay"));
	mountinfo_free(&mi);
	/* our own: parses, and "/proc/PID/root" finds the same file */
	assert_int_equal(mountinfo_load(0, &mi), 0);
	assert_true(mi.n > 0);
	mountinfo_free(&mi);
	assert_int_equal(mountinfo_load_for_root("/proc/1/root", &mi), 0);
	mountinfo_free(&mi);
	assert_int_equal(mountinfo_load_for_root("/tmp/fakeroot", &mi), -ENOENT);
	assert_int_equal(mi.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    TEST(test_copy_has_what_is_read),
	    TEST(test_truncated),
	    TEST(test_cap),
	    TEST(test_inflate),
	    TEST(test_later),
	    TEST(test_mountinfo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
