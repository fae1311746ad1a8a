/*
 * debugfile — a module's separate debug file, found and checked (see
 * debugfile.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/elfsec.h"
#include "stacktop/lib/pump.h"
#include "stacktop/proc/mountinfo.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/symbols/debugfile.h"

/* The file at path under root, when no remote (FUSE, network) mount of
 * the target is on its way, by its text or through a symlink
 * (tfile_open_local): a lookup there waits for a daemon the target may
 * run. mi may be empty (a test's root): nothing is remote then. */
static int open_local(const char *root, const char *path, const struct mountinfo *mi,
		      struct stat *st)
{
	int rootfd = tfile_root_open_path(root), fd;

	if (rootfd < 0 && rootfd != TFILE_OWN_ROOT)
		return rootfd;
	fd = tfile_open_local(rootfd, mi, path, 0, TFILE_ELF_MAX, st);
	tfile_root_close(rootfd);
	return fd;
}

/* The debug file's copy (elfimage: no mapping), or NULL. */
static Elf *image_of(int fd)
{
	Elf *e;

	return elfimage_open(fd, ELFIMAGE_NAMES | ELFIMAGE_DWARF, ELFIMAGE_MAX, &e) == 0 ? e : NULL;
}

/* Does the module's file have DWARF its image left out (space.c copies
 * names and CFI only)? */
static bool dwarf_left_out(Elf *elf)
{
	GElf_Shdr sh;

	return ((elfsec_find(elf, ".debug_info", &sh) || elfsec_find(elf, ".zdebug_info", &sh)) &&
		sh.sh_type == SHT_NOBITS && sh.sh_size > 0);
}

/* The module's own file as its debug file: reopened through the
 * map_files link it was read through (space.c), else by its path under
 * root; taken when it is the very file (device, inode and build-id), its
 * DWARF copied now. */
static Elf *own_dwarf(const struct module *mod, const char *root, const struct mountinfo *mi)
{
	uint8_t id[20];
	struct stat st;
	size_t len;
	Elf *e = NULL;
	int fd;

	if (!dwarf_left_out(mod->elf))
		return NULL;
	/* the mapped file itself (deleted or replaced since), else the path */
	fd = mod->reopen ? tfile_open_magic(mod->reopen, TFILE_ELF_MAX, &st) : -ENOENT;
	if (fd >= 0 && (st.st_dev != mod->dev || st.st_ino != mod->ino)) {
		close(fd);
		fd = -ESTALE;
	}
	if (fd < 0 && (fd = open_local(root, mod->path, mi, &st)) < 0)
		return NULL;
	if (st.st_dev == mod->dev && st.st_ino == mod->ino &&
	    elfimage_open(fd, ELFIMAGE_DWARF, ELFIMAGE_MAX, &e) == 0) {
		len = elfsec_build_id(e, id, sizeof(id));
		if (len != mod->build_id_len || memcmp(id, mod->build_id, len)) {
			elfimage_close(e);
			e = NULL;
		}
	}
	close(fd);
	return e;
}

/* ROOT/usr/lib/debug/.build-id/xx/yyyy.debug, when its build-id is mod's. */
static Elf *by_build_id(const struct module *mod, const char *root, const struct mountinfo *mi)
{
	char path[PATH_MAX], *p = path;
	uint8_t id[20];
	size_t i, len;
	int fd;
	Elf *e;

	if (mod->build_id_len < 2)
		return NULL;
	p += sprintf(p, "/usr/lib/debug/.build-id/%02x/", mod->build_id[0]);
	for (i = 1; i < mod->build_id_len; i++)
		p += sprintf(p, "%02x", mod->build_id[i]);
	strcpy(p, ".debug");
	fd = open_local(root, path, mi, NULL);
	if (fd < 0)
		return NULL;
	e = image_of(fd);
	close(fd);
	len = e ? elfsec_build_id(e, id, sizeof(id)) : 0;
	if (!e || len != mod->build_id_len || memcmp(id, mod->build_id, len)) {
		elfimage_close(e);
		return NULL;
	}
	return e;
}

/* CRC32 of the whole file, which must be at most TFILE_CRC_MAX long (it
 * may have grown since it was checked: -EFBIG then, not a longer read). */
static int file_crc32(int fd, uint32_t *out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	uint64_t off = 0;
	ssize_t r;

	while ((r = pread(fd, buf, sizeof(buf), (off_t)off)) > 0) {
		off += (uint64_t)r;
		if (off > TFILE_CRC_MAX) {
			tfile_count(TFILE_R_TOO_BIG);
			return -EFBIG;
		}
		crc = crc32(crc, buf, (uInt)r);
		pump();
	}
	if (r < 0)
		return -errno;
	*out = (uint32_t)crc;
	return 0;
}

/* Is e the debug file of mod? By build-id when both have one (no CRC, no
 * size limit but TFILE_ELF_MAX); else by the debuglink's CRC, computed only
 * for a file of at most TFILE_CRC_MAX. */
static bool debuglink_matches(int fd, const struct stat *st, Elf *e, const struct module *mod,
			      uint32_t want)
{
	uint8_t id[20];
	size_t len = elfsec_build_id(e, id, sizeof(id));
	uint32_t got = 0;

	if (len && mod->build_id_len)
		return len == mod->build_id_len && !memcmp(id, mod->build_id, len);
	if ((uint64_t)st->st_size > TFILE_CRC_MAX) {
		tfile_count(TFILE_R_TOO_BIG);
		return false;
	}
	return file_crc32(fd, &got) == 0 && got == want;
}

/* .gnu_debuglink: a NUL-terminated file name, padded to 4, then the CRC32
 * of the debug file in the ELF's byte order. */
static int read_debuglink(Elf *elf, char *name, size_t size, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsec_find(elf, ".gnu_debuglink", &sh);
	Elf_Data *d, dst, src;
	size_t len;

	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return -ENOENT;
	len = strnlen(d->d_buf, d->d_size);
	if (len == 0 || len >= size || ((len + 4) & ~3u) + 4 > d->d_size)
		return -EINVAL;
	memcpy(name, d->d_buf, len);
	name[len] = '\0';
	if (strchr(name, '/'))
		return -EINVAL;
	src = (Elf_Data){.d_buf = (char *)d->d_buf + ((len + 4) & ~3u),
			 .d_size = 4,
			 .d_type = ELF_T_WORD,
			 .d_version = EV_CURRENT};
	dst = (Elf_Data){.d_buf = crc, .d_size = 4, .d_type = ELF_T_WORD, .d_version = EV_CURRENT};
	if (!gelf_xlatetom(elf, &dst, &src, elf_getident(elf, NULL)[EI_DATA]))
		return -EINVAL;
	return 0;
}

/* The .gnu_debuglink name next to the binary, in its .debug/, then under
 * /usr/lib/debug/DIR/ (an absolute DIR only), when it matches mod. */
static Elf *by_debuglink(const struct module *mod, const char *root, const struct mountinfo *mi)
{
	char name[256], dir[PATH_MAX], path[PATH_MAX];
	const char *fmt[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
	uint32_t want = 0;
	const char *slash;
	size_t i;

	if (read_debuglink(mod->elf, name, sizeof(name), &want))
		return NULL;
	slash = strrchr(mod->path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - mod->path), mod->path);
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		struct stat st;
		int fd;

		if (i == 2 && dir[0] != '/')
			continue;
		if (snprintf(path, sizeof(path), fmt[i], dir, name) >= (int)sizeof(path))
			continue;
		Elf *e;

		fd = open_local(root, path, mi, &st);
		if (fd < 0)
			continue;
		/* The link may name the binary itself (same dir, same name). */
		if (st.st_ino == mod->ino && st.st_dev == mod->dev) {
			close(fd);
			continue;
		}
		e = image_of(fd);
		if (e && debuglink_matches(fd, &st, e, mod, want)) {
			close(fd);
			return e;
		}
		elfimage_close(e);
		close(fd);
	}
	return NULL;
}

Elf *debugfile_find(const struct module *mod, const char *root)
{
	Elf *e;

	/* Only files have debug files: not [vdso], not an unopened module. */
	if (!mod->elf || !mod->path || mod->path[0] != '/')
		return NULL;
	struct mountinfo mi;

	if (!root)
		root = "";
	/* a root we cannot read the mounts of (a test's) has none remote */
	mountinfo_load_for_root(root, &mi);
	e = own_dwarf(mod, root, &mi);
	if (!e)
		e = by_build_id(mod, root, &mi);
	if (!e)
		e = by_debuglink(mod, root, &mi);
	mountinfo_free(&mi);
	return e;
}

Elf *debugfile_open_checked(const char *path, const uint8_t *id, size_t len)
{
	uint8_t got[20];
	Elf *e = NULL;
	int fd;

	fd = tfile_open_under("", path, 0, TFILE_ELF_MAX, NULL);
	if (fd >= 0) {
		e = image_of(fd);
		close(fd);
	}
	if (e && (elfsec_build_id(e, got, sizeof(got)) != len || memcmp(got, id, len))) {
		elfimage_close(e);
		e = NULL;
	}
	return e;
}
