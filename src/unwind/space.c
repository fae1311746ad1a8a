/*
 * space — a target's mappings and the ELF modules behind them.
 *
 * Contract:
 *  - space_parse_maps is pure: text in, a sorted array of struct mapping out
 *    (each path strdup'ed); the caller frees it with space_free_mappings.
 *  - struct space must be zeroed before its first space_load. space_load
 *    builds a new mapping array first and only then drops the old one, so a
 *    reload keeps the modules that are still mapped open (their refcount
 *    never reaches 0 in between); an unchanged executable mapping keeps its
 *    module without reopening the file. generation is bumped by the first
 *    load, by a load that finds the executable mappings changed, and by a
 *    release of a loaded space, so a no-op reload keeps address-keyed caches.
 *    space_release drops everything and leaves the struct reusable.
 *  - Modules live in one process-wide cache (a mutex-protected list; it is
 *    touched only on load and release, never per sample). Each mapping with
 *    a module holds one reference; space_module_open_path hands out one
 *    more. space_module_put frees at 0: ext destructors, elf_end, close.
 *
 * Opening files (all through tfile, which never blocks on a FIFO, never
 * opens a device, and caps the size at TFILE_ELF_MAX):
 * /proc/PID/map_files/START-END names the very file that is mapped, even
 * when deleted or outside our mount namespace, but needs CAP_SYS_ADMIN (or
 * CAP_CHECKPOINT_RESTORE since 5.9) — proc(5). Otherwise PATH is looked up
 * under the target's root (/proc/PID/root, RESOLVE_IN_ROOT) with no symlink
 * allowed on the way: a maps path is the kernel's d_path, which holds none,
 * so a symlink there was planted after the mapping. A file found so is
 * trusted only when its device and inode match the maps line; the device
 * may differ only on overlayfs and btrfs, whose st_dev is not the one maps
 * shows (the superblock's, or the real layer's), and there the inode must
 * still match.
 *
 * File descriptors and mappings: a module keeps neither. Its ELF is a
 * compact copy read with pread (elf/elfimage.h), in three steps, each
 * reading the file anew: its headers and notes when the module is made
 * (the build-id, the bias); its names and CFI when a sample first needs
 * them (space_module_fill, called by unwind, lunwind and sym); its DWARF
 * when lines are first wanted (debugfile.c). The file is found again
 * through the map_files link it was first read through (module->reopen),
 * else its path under the target's root, and only the same device and
 * inode is read. A path our caller gave is read whole at once, code too
 * (offline annotate disassembles it). 256 MiB at most per copy.
 * A mapped file would stay the target's: truncated, or failing a page
 * read on FUSE, it would turn a later read in libdw into SIGBUS. A copy
 * costs what stacktop reads, not the file's size (a module no sample
 * lands in costs its headers), and a target with thousands of mapped
 * files costs no descriptors.
 *
 * Remote files: a mapping whose device is a FUSE or network mount in the
 * target's /proc/PID/mountinfo is not opened at all (proc/mountinfo.h): an
 * open, fstat or read there waits for a daemon the target may run, and
 * one that never answers would block the main loop for good, SIGTERM
 * included. Such a module has no ELF (no names, frame-pointer unwinding)
 * and remote set, so the help can say why; each refusal is counted
 * (TFILE_R_REMOTE).
 *
 * Bias: the kernel maps a PT_LOAD segment at page granularity, so a
 * mapping's pgoff is the segment's p_offset rounded down to a page and its
 * start is the runtime address of that file offset. Then for any file
 * offset x in the segment, runtime = start + (x - pgoff) and
 * elf_vaddr = p_vaddr + (x - p_offset), so
 *   bias = runtime - elf_vaddr = start - pgoff - (p_vaddr - p_offset).
 * For a non-PIE ET_EXEC, start == p_vaddr rounded down, giving 0.
 *
 * The vDSO has no file: its image is read from /proc/PID/mem into a buffer
 * owned by the module and opened with elf_memory. An image byte-identical
 * to our own vDSO (every process of one kernel and ABI maps the same one)
 * shares one module made from our copy; any other image (a 32-bit target,
 * or a target that rewrote its copy) gets a module of its own that no
 * other process finds, so one target cannot poison another's names.
 */
#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/elfsec.h"
#include "stacktop/lib/array.h"
#include "stacktop/proc/mountinfo.h"
#include "stacktop/unwind/space.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/tfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Private part of a module: cache linkage and an owned in-memory image. */
struct module_priv {
	struct module m;
	struct module_priv *next;
	void *image; /* vDSO copy behind an elf_memory Elf, or NULL */
	bool cached; /* findable in the cache (opened successfully) */
	bool code;   /* its image holds the code (ELFIMAGE_CODE) */
	/* names and CFI not read yet (space_module_fill), and the target root
	 * its path is looked up under then, when m.reopen fails */
	struct elfimage_pending *pending;
	char *root;
	bool own_vdso; /* the shared module made from our own vDSO */
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module_priv *cache_head;

#define DELETED_SUFFIX " (deleted)"
#define VDSO_MAX (1u << 20)

static struct module_priv *priv_of(struct module *m)
{
	return (struct module_priv *)((char *)m - offsetof(struct module_priv, m));
}

/* libelf refuses to work until told which ELF version we speak. */
static void elf_init_once(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

/* ---- maps parsing ------------------------------------------------------- */

/* Parse hex digits up to a non-hex char; at least one digit, no overflow. */
static const char *parse_hex(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = p;

	for (;; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (v >> 60)
			return NULL;
		v = v << 4 | d;
	}
	if (p == s)
		return NULL;
	*out = v;
	return p;
}

static const char *parse_dec(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = p;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return NULL;
	*out = v;
	return p;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One line [p, end) → *m (path malloc'ed or NULL). Returns 0, -EINVAL for a
 * malformed line, -ENOMEM. */
static int parse_line(const char *p, const char *end, struct mapping *m)
{
	uint64_t maj, min;
	const char *q;

	memset(m, 0, sizeof(*m));
	if (!(p = parse_hex(p, &m->start)) || *p++ != '-')
		return -EINVAL;
	if (!(p = parse_hex(p, &m->end)) || *p++ != ' ')
		return -EINVAL;
	if (m->end <= m->start || end - p < 5)
		return -EINVAL;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's') || p[4] != ' ')
		return -EINVAL;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += 5;
	if (!(p = parse_hex(p, &m->pgoff)) || *p++ != ' ')
		return -EINVAL;
	if (!(p = parse_hex(p, &maj)) || *p++ != ':')
		return -EINVAL;
	if (!(p = parse_hex(p, &min)) || *p++ != ' ')
		return -EINVAL;
	if (maj > UINT32_MAX || min > UINT32_MAX || p > end)
		return -EINVAL;
	m->dev_major = (unsigned)maj;
	m->dev_minor = (unsigned)min;
	if (!(p = parse_dec(p, &m->ino)) || p > end)
		return -EINVAL;
	if (p < end && *p != ' ' && *p != '\t')
		return -EINVAL;
	p = skip_spaces(p, end);
	/* The path is the rest of the line, spaces included. */
	q = end;
	if (q > p) {
		m->path = strndup(p, (size_t)(q - p));
		if (!m->path)
			return -ENOMEM;
	}
	return 0;
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int space_parse_maps(const char *text, struct mapping **out, size_t *n)
{
	struct mapping *arr = NULL;
	size_t cnt = 0, cap = 0, w;
	const char *p = text;
	int err;

	if (!text || !out || !n)
		return -EINVAL;
	while (*p) {
		const char *eol = strchrnul(p, '\n');
		struct mapping m;

		err = parse_line(p, eol, &m);
		if (err == -ENOMEM)
			goto fail;
		if (err == 0) {
			if (array_grow((void **)&arr, &cap, cnt + 1, sizeof(*arr))) {
				free(m.path);
				err = -ENOMEM;
				goto fail;
			}
			arr[cnt++] = m;
		}
		p = *eol ? eol + 1 : eol;
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), mapping_cmp);
	/* Keep the promise of non-overlapping ranges: drop any line that
	 * overlaps its predecessor (cannot happen in a real maps file). */
	for (w = 0, cap = 0; cap < cnt; cap++) {
		if (w > 0 && arr[cap].start < arr[w - 1].end) {
			free(arr[cap].path);
			continue;
		}
		arr[w++] = arr[cap];
	}
	*out = arr;
	*n = w;
	return 0;
fail:
	space_free_mappings(arr, cnt);
	return err;
}

void space_free_mappings(struct mapping *m, size_t n)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

/* ---- modules ------------------------------------------------------------ */

/* End the module's Elf: a file's image is freed with it; the vDSO's
 * image is p->image, freed by the caller. */
static void module_elf_end(struct module_priv *p)
{
	if (!p->m.elf)
		return;
	if (p->image)
		elf_end(p->m.elf);
	else
		elfimage_close(p->m.elf);
}

/* A new module (refs 1) for path; takes ownership of image; fd (if >= 0)
 * stays the caller's: the Elf is a copy (elfimage, with flags) and does
 * not keep it. */
static int module_new(const char *path, int fd, unsigned flags, void *image, size_t image_len,
		      dev_t dev, ino_t ino, struct module_priv **out)
{
	/* a path our caller gave is read whole now; a live module's names
	 * and CFI when a sample first needs them */
	unsigned eager = (flags & ELFIMAGE_CODE) ? ELFIMAGE_NAMES : 0;
	struct module_priv *p = calloc(1, sizeof(*p));
	GElf_Ehdr eh;

	if (!p)
		return -ENOMEM;
	p->m.path = strdup(path);
	if (!p->m.path) {
		free(p);
		return -ENOMEM;
	}
	p->m.name = text_basename(p->m.path);
	p->m.dev = dev;
	p->m.ino = ino;
	p->m.refs = 1;
	p->image = image;
	elf_init_once();
	if (image)
		p->m.elf = elf_memory(image, image_len);
	else if (fd >= 0 && elfimage_open_later(fd, flags, flags & ELFIMAGE_NAMES & ~eager,
						ELFIMAGE_MAX, &p->m.elf, &p->pending) == 0) {
		p->code = flags & ELFIMAGE_CODE;
		p->m.fill_later = p->pending != NULL;
	}
	if (p->m.elf && (elf_kind(p->m.elf) != ELF_K_ELF || !gelf_getehdr(p->m.elf, &eh))) {
		module_elf_end(p);
		p->m.elf = NULL;
	}
	if (p->m.elf) {
		p->m.e_type = eh.e_type;
		p->m.build_id_len = elfsec_build_id(p->m.elf, p->m.build_id, sizeof(p->m.build_id));
	}
	*out = p;
	return 0;
}

static void module_destroy(struct module_priv *p)
{
	int i;

	for (i = 0; i < SPACE_EXT_COUNT; i++)
		if (p->m.ext[i] && p->m.ext_free[i])
			p->m.ext_free[i](p->m.ext[i]);
	elfimage_pending_free(p->pending);
	module_elf_end(p);
	ARRAY_FREE_ALL(p->image, p->root, p->m.reopen, p->m.path, p);
}

/* Caller holds cache_lock. A cached module for the file, with a new ref;
 * one with code when the flags ask for it. */
static struct module *cache_find_locked(dev_t dev, ino_t ino, const char *path, unsigned flags)
{
	struct module_priv *p;

	for (p = cache_head; p; p = p->next) {
		if (!p->cached || p->image || ((flags & ELFIMAGE_CODE) && !p->code))
			continue;
		if (ino ? (p->m.dev == dev && p->m.ino == ino)
			: (p->m.ino == 0 && !strcmp(p->m.path, path))) {
			p->m.refs++;
			return &p->m;
		}
	}
	return NULL;
}

static void cache_insert_locked(struct module_priv *p, bool cached)
{
	p->cached = cached;
	p->next = cache_head;
	cache_head = p;
}

void space_module_get(struct module *m)
{
	pthread_mutex_lock(&cache_lock);
	m->refs++;
	pthread_mutex_unlock(&cache_lock);
}

void space_module_put(struct module *m)
{
	struct module_priv *p, **pp;

	if (!m)
		return;
	p = priv_of(m);
	pthread_mutex_lock(&cache_lock);
	if (--m->refs > 0) {
		pthread_mutex_unlock(&cache_lock);
		return;
	}
	for (pp = &cache_head; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	module_destroy(p);
}

/* Find or create the module for an open fd (consumed). path is the name to
 * show; the cache key is the fd's (dev, ino). */
static int module_from_fd(int fd, const char *path, unsigned flags, struct module **out)
{
	struct module_priv *p;
	struct stat st;
	struct module *m;
	int err;

	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	pthread_mutex_lock(&cache_lock);
	m = cache_find_locked(st.st_dev, st.st_ino, path, flags);
	pthread_mutex_unlock(&cache_lock);
	if (m) {
		close(fd);
		*out = m;
		return 0;
	}
	err = module_new(path, fd, flags, NULL, 0, st.st_dev, st.st_ino, &p);
	close(fd);
	if (err)
		return err;
	pthread_mutex_lock(&cache_lock);
	/* Another thread may have raced us to the same file. */
	m = cache_find_locked(st.st_dev, st.st_ino, path, flags);
	if (!m)
		cache_insert_locked(p, true);
	pthread_mutex_unlock(&cache_lock);
	if (m) {
		module_destroy(p);
		*out = m;
		return 0;
	}
	*out = &p->m;
	return 0;
}

int space_module_open_path(const char *path, struct module **out)
{
	int fd;

	if (!path || !out)
		return -EINVAL;
	/* Our caller's path (a test, a file outside any process): followed
	 * as given, magic links included, but still a capped regular file. */
	fd = tfile_open_magic(path, TFILE_ELF_MAX, NULL);
	if (fd < 0)
		return fd;
	/* offline annotate disassembles such a file: keep its code */
	return module_from_fd(fd, path, ELFIMAGE_NAMES | ELFIMAGE_DWARF | ELFIMAGE_CODE, out);
}

/* ---- loading a live process --------------------------------------------- */

/* Read a whole /proc file; maps can be large and grows while we read. */
static int read_proc_file(const char *path, char **out)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	int fd, err;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT ? -ESRCH : -errno;
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t r;

		if (array_grow((void **)&buf, &cap, len + 4096, 1)) {
			err = -ENOMEM;
			goto fail;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno == ENOENT ? -ESRCH : -errno;
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return 0;
fail:
	close(fd);
	free(buf);
	return err;
}

/* The path as it was when mapped: without the " (deleted)" marker. */
static char *strip_deleted(const char *path)
{
	size_t len = strlen(path), sl = strlen(DELETED_SUFFIX);

	if (len > sl && !strcmp(path + len - sl, DELETED_SUFFIX))
		len -= sl;
	return strndup(path, len);
}

/* Filesystems whose st_dev is not the device /proc/PID/maps shows for a
 * file: overlayfs (maps shows the real layer's file) and btrfs (stat gives
 * a per-subvolume device). */
static bool dev_may_differ(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && (sf.f_type == 0x794c7630 /* OVERLAYFS_SUPER_MAGIC */ ||
					 sf.f_type == 0x9123683e /* BTRFS_SUPER_MAGIC */);
}

/* Open the file behind a file-backed mapping, from the target's view.
 * *rootfd is the target's root, opened on first need (the caller closes
 * it). magic (PATH_MAX bytes) receives the map_files path when that was
 * the way in, else "". fd or -errno. */
static int open_mapped_file(pid_t pid, const struct mapping *mp, const char *path, int *rootfd,
			    char *magic)
{
	struct stat st;
	int fd;

	snprintf(magic, PATH_MAX, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, mp->start,
		 mp->end);
	fd = tfile_open_magic(magic, TFILE_ELF_MAX, &st);
	/* Refused for what it is (a device, too big): no second way. */
	if (fd >= 0 || fd == -ENODEV || fd == -EFBIG)
		return fd;
	magic[0] = '\0';
	if (*rootfd < 0 && (*rootfd = tfile_root_open(pid)) < 0)
		return *rootfd;
	fd = tfile_open(*rootfd, path, TFILE_NO_SYMLINKS, TFILE_ELF_MAX, &st);
	if (fd < 0)
		return fd;
	/* Another file at that path is a replaced binary (its symbols and CFI
	 * would describe other code), or one planted to be read as root. */
	if (!mp->ino || st.st_ino != (ino_t)mp->ino ||
	    (st.st_dev != makedev(mp->dev_major, mp->dev_minor) && !dev_may_differ(fd))) {
		close(fd);
		tfile_count(TFILE_R_IDENTITY);
		return -ESTALE;
	}
	return fd;
}

/* Module for a file we could not (or would not) open: keeps the name for
 * display, and whether it was left for being remote. */
static int module_unopened(const struct mapping *mp, const char *path, bool remote,
			   struct module **out)
{
	struct module_priv *p;
	int err;

	err = module_new(path, -1, 0, NULL, 0, makedev(mp->dev_major, mp->dev_minor),
			 (ino_t)mp->ino, &p);
	if (err)
		return err;
	p->m.remote = remote;
	pthread_mutex_lock(&cache_lock);
	cache_insert_locked(p, false);
	pthread_mutex_unlock(&cache_lock);
	*out = &p->m;
	return 0;
}

/* How to reach m's file again (its names and CFI, space_module_fill; its
 * DWARF, debugfile.c): the map_files link it was read through (the file
 * even when deleted, while that process maps it), and the target's root
 * for its path. Set once, under the lock. */
static void remember_way(struct module *m, const char *magic, pid_t pid)
{
	struct module_priv *p = priv_of(m);
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	pthread_mutex_lock(&cache_lock);
	if (!m->reopen && magic[0])
		m->reopen = strdup(magic);
	if (!p->root)
		p->root = strdup(root);
	pthread_mutex_unlock(&cache_lock);
}

/* m's file, reopened: through m->reopen, else by its path under the
 * root; only the very file (device and inode). fd or -errno. */
static int module_reopen(struct module_priv *p)
{
	struct stat st;
	int fd = -ENOENT;

	if (p->m.reopen && (fd = tfile_open_magic(p->m.reopen, TFILE_ELF_MAX, &st)) >= 0 &&
	    st.st_ino == p->m.ino && st.st_dev == p->m.dev)
		return fd;
	if (fd >= 0)
		close(fd);
	if (!p->root || p->m.path[0] != '/')
		return -ENOENT;
	/* a FUSE mount on the way, mounted since: the walk would wait on it */
	struct mountinfo mi;
	bool remote;

	mountinfo_load_for_root(p->root, &mi);
	remote = mountinfo_path_remote(&mi, p->m.path) != NULL;
	mountinfo_free(&mi);
	if (remote) {
		tfile_count(TFILE_R_REMOTE);
		return -EREMOTE;
	}
	fd = tfile_open_under(p->root, p->m.path, TFILE_NO_SYMLINKS, TFILE_ELF_MAX, &st);
	if (fd >= 0 && (st.st_ino != p->m.ino || (st.st_dev != p->m.dev && !dev_may_differ(fd)))) {
		close(fd);
		tfile_count(TFILE_R_IDENTITY);
		return -ESTALE;
	}
	return fd;
}

void space_module_fill(struct module *m)
{
	struct module_priv *p;
	int fd;

	/* Only a module space made has a module_priv around it. */
	if (!m || !m->fill_later)
		return;
	p = priv_of(m);
	pthread_mutex_lock(&cache_lock);
	if (p->pending && m->elf) {
		fd = module_reopen(p);
		/* what cannot be read (gone, shrunk) becomes SHT_NOBITS */
		elfimage_fill(m->elf, p->pending, fd);
		p->pending = NULL;
		if (fd >= 0)
			close(fd);
	}
	m->fill_later = false; /* after the fill: a reader that sees false may read */
	pthread_mutex_unlock(&cache_lock);
}

/* What attach_modules looks up once per load: the target's root fd and
 * its mounts (read on the first file that needs opening). */
struct attach_ctx {
	pid_t pid;
	int rootfd;
	bool mounts_read;
	struct mountinfo mounts;
};

/* Is the mapped file on a FUSE or network mount of the target? */
static bool mapping_remote(struct attach_ctx *c, const struct mapping *mp)
{
	if (!c->mounts_read) {
		c->mounts_read = true;
		/* unreadable: every file is taken as local, as before */
		mountinfo_load(c->pid, &c->mounts);
	}
	return mountinfo_dev_remote(&c->mounts, mp->dev_major, mp->dev_minor) != NULL;
}

static int attach_file_module(struct attach_ctx *c, struct mapping *mp)
{
	char *path = strip_deleted(mp->path), magic[PATH_MAX];
	bool remote;
	int fd, err;

	if (!path)
		return -ENOMEM;
	remote = mapping_remote(c, mp);
	if (remote)
		tfile_count(TFILE_R_REMOTE);
	fd = remote ? -EREMOTE : open_mapped_file(c->pid, mp, path, &c->rootfd, magic);
	if (fd >= 0) {
		err = module_from_fd(fd, path, ELFIMAGE_NAMES, &mp->mod);
		/* how to reach the file again for its DWARF (debugfile.c) */
		if (!err)
			remember_way(mp->mod, magic, c->pid);
	} else
		err = module_unopened(mp, path, remote, &mp->mod);
	free(path);
	return err;
}

static pthread_once_t own_vdso_once = PTHREAD_ONCE_INIT;
static const void *own_vdso_base;
static size_t own_vdso_len;

static void own_vdso_init(void)
{
	uint64_t at = getauxval(AT_SYSINFO_EHDR);
	struct mapping *maps;
	char *text;
	size_t n, i;

	if (!at || read_proc_file("/proc/self/maps", &text))
		return;
	if (space_parse_maps(text, &maps, &n) == 0) {
		for (i = 0; i < n; i++) {
			if (maps[i].start == at && maps[i].path &&
			    !strcmp(maps[i].path, "[vdso]")) {
				own_vdso_base = (const void *)(uintptr_t)at;
				own_vdso_len = (size_t)(maps[i].end - maps[i].start);
			}
		}
		space_free_mappings(maps, n);
	}
	free(text);
}

/* Our own vDSO: where it is mapped and how long it is (0 when none). */
static void own_vdso(const void **base, size_t *len)
{
	pthread_once(&own_vdso_once, own_vdso_init);
	*base = own_vdso_base;
	*len = own_vdso_len;
}

/* The vDSO image from the target's memory. Shared only when it is our own
 * image byte for byte; otherwise private to this mapping's process. */
static int attach_vdso_module(pid_t pid, struct mapping *mp)
{
	size_t len = (size_t)(mp->end - mp->start), own_len;
	struct module_priv *p, *q = NULL;
	const void *own_base;
	char buf[64];
	void *image;
	bool own;
	ssize_t r;
	int fd, err;

	if (len > VDSO_MAX)
		return -E2BIG;
	image = malloc(len);
	if (!image)
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "/proc/%d/mem", (int)pid);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(image);
		return -errno;
	}
	r = pread(fd, image, len, (off_t)mp->start);
	err = r < 0 ? -errno : 0;
	close(fd);
	if (r != (ssize_t)len) {
		free(image);
		return err ? err : -EIO;
	}
	own_vdso(&own_base, &own_len);
	own = own_len == len && !memcmp(image, own_base, len);
	if (own) {
		pthread_mutex_lock(&cache_lock);
		for (q = cache_head; q && !(q->cached && q->own_vdso); q = q->next)
			;
		if (q)
			q->m.refs++;
		pthread_mutex_unlock(&cache_lock);
		if (q) {
			free(image);
			mp->mod = &q->m;
			return 0;
		}
	}
	err = module_new("[vdso]", -1, 0, image, len, 0, 0, &p);
	if (err) {
		free(image);
		return err;
	}
	if (!p->m.elf) {
		module_destroy(p);
		return -ENOEXEC;
	}
	p->own_vdso = own;
	pthread_mutex_lock(&cache_lock);
	if (own) /* another thread may have made it meanwhile */
		for (q = cache_head; q && !(q->cached && q->own_vdso); q = q->next)
			;
	if (q)
		q->m.refs++;
	else
		cache_insert_locked(p, own);
	pthread_mutex_unlock(&cache_lock);
	if (q) {
		module_destroy(p);
		p = q;
	}
	mp->mod = &p->m;
	return 0;
}

/* bias = start - pgoff - (p_vaddr - p_offset) for the PT_LOAD this mapping
 * was made from: the one whose page-rounded p_offset is pgoff, preferring an
 * executable one; failing that, the one whose file range holds pgoff. */
static uint64_t mapping_bias(const struct mapping *mp, Elf *elf)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	GElf_Phdr best = {0}, ph;
	size_t i, nph;
	int score = 0;

	if (elf_getphdrnum(elf, &nph) != 0)
		return mp->start - mp->pgoff;
	for (i = 0; i < nph; i++) {
		int sc = 0;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if ((ph.p_offset & ~(page - 1)) == mp->pgoff)
			sc = (ph.p_flags & PF_X) ? 3 : 2;
		else if (ph.p_offset <= mp->pgoff && mp->pgoff < ph.p_offset + ph.p_filesz)
			sc = 1;
		if (sc > score) {
			score = sc;
			best = ph;
		}
	}
	if (!score)
		return mp->start - mp->pgoff;
	return mp->start - mp->pgoff - (best.p_vaddr - best.p_offset);
}

static bool is_vdso(const struct mapping *mp)
{
	return mp->path && !strcmp(mp->path, "[vdso]");
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Same line in maps: same range, offset, file. */
static bool mapping_same(const struct mapping *a, const struct mapping *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->prot == b->prot && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->ino == b->ino && str_eq(a->path, b->path);
}

/* A reload shares the module of an unchanged mapping instead of reopening
 * the file: a periodic reload then costs no open or fstat per library. */
static bool reuse_module(const struct space *old, struct mapping *mp)
{
	const struct mapping *o = space_find(old, mp->start);

	if (!o || !o->mod || !o->mod->elf || !mapping_same(o, mp))
		return false;
	pthread_mutex_lock(&cache_lock);
	o->mod->refs++;
	pthread_mutex_unlock(&cache_lock);
	mp->mod = o->mod;
	mp->bias = o->bias;
	return true;
}

/* Attach modules to the executable file-backed mappings and the vDSO. A
 * module that cannot be made is left NULL: that mapping unwinds by frame
 * pointers and symbolizes as unknown, which is not an error. */
static int attach_modules(pid_t pid, const struct space *old, struct mapping *maps, size_t n)
{
	struct attach_ctx c = {.pid = pid, .rootfd = -1};
	int err = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		struct mapping *mp = &maps[i];

		if (!(mp->prot & PROT_EXEC) || !mp->path)
			continue;
		if (reuse_module(old, mp))
			continue;
		if (mp->path[0] == '/')
			err = attach_file_module(&c, mp);
		else if (is_vdso(mp))
			err = attach_vdso_module(pid, mp);
		else
			continue;
		if (err == -ENOMEM)
			break;
		err = 0;
		if (mp->mod && mp->mod->elf)
			mp->bias = mapping_bias(mp, mp->mod->elf);
		else if (mp->mod)
			mp->bias = mp->start - mp->pgoff;
	}
	tfile_root_close(c.rootfd);
	mountinfo_free(&c.mounts);
	return err;
}

/* Whether the executable mappings differ: only they matter to caches keyed
 * by code address (the unwinder's rules, the symbolizer's answers). */
static bool exec_changed(const struct mapping *a, size_t na, const struct mapping *b, size_t nb)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < na && !(a[i].prot & PROT_EXEC))
			i++;
		while (j < nb && !(b[j].prot & PROT_EXEC))
			j++;
		if (i == na || j == nb)
			return i != na || j != nb;
		if (!mapping_same(&a[i], &b[j]))
			return true;
		i++;
		j++;
	}
}

static void put_mappings(struct mapping *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		space_module_put(maps[i].mod);
		maps[i].mod = NULL;
	}
	space_free_mappings(maps, n);
}

int space_load(struct space *s, pid_t pid)
{
	struct mapping *maps;
	char path[64], *text = NULL;
	size_t n;
	int err;

	if (!s || pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = read_proc_file(path, &text);
	if (err)
		return err;
	err = space_parse_maps(text, &maps, &n);
	free(text);
	if (err)
		return err;
	/* An empty maps file is what a zombie shows. */
	if (n == 0) {
		space_free_mappings(maps, n);
		return -ESRCH;
	}
	if (s->pid != pid) /* another process: nothing to share */
		space_release(s);
	err = attach_modules(pid, s, maps, n);
	if (err) {
		put_mappings(maps, n);
		return err;
	}
	if (!s->maps || exec_changed(s->maps, s->nmaps, maps, n))
		s->generation++;
	put_mappings(s->maps, s->nmaps);
	s->pid = pid;
	s->maps = maps;
	s->nmaps = n;
	return 0;
}

void space_release(struct space *s)
{
	if (!s)
		return;
	if (s->maps)
		s->generation++;
	put_mappings(s->maps, s->nmaps);
	s->maps = NULL;
	s->nmaps = 0;
}

const struct mapping *space_find(const struct space *s, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!s || !s->maps)
		return NULL;
	hi = s->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mapping *m = &s->maps[mid];

		if (pc < m->start)
			hi = mid;
		else if (pc >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}
