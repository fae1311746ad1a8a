/*
 * sym — addresses to names: function, module, file:line; kernel and JIT.
 *
 * What it owns:
 *  - A per-module function table (struct sym_table), hung on
 *    mod->ext[SPACE_EXT_SYM] with its destructor, so it is built once per
 *    ELF file however many processes or struct sym map it, and dies with the
 *    module. Built from .symtab, else from a separate debug file's .symtab
 *    (build-id, then .gnu_debuglink), else .dynsym. Entries are sorted by
 *    start, aliases collapsed (sized over size 0, global > weak > local,
 *    fewer leading underscores, longer name, then strcmp, so the choice
 *    does not depend on symbol order),
 *    and each has an end: start + size, or for a size-0 symbol the next
 *    symbol (bounded by its section). Lookup is a binary search.
 *    The table also owns the debug file, the libdw handle and a cache per
 *    ELF address of its file:line and its inline chain (the inlined
 *    subroutines holding it, innermost first, each with its call site:
 *    dwarf_getscopes once per address, then a hash probe).
 *  - Per table, built on first need, the function ranges of the module's
 *    .eh_frame and .debug_frame (one FDE per function, kept even by strip):
 *    a pc no symbol covers is named by the FDE holding it, "module!0xOFF"
 *    (the FDE's start as a file offset, as unnamed addresses are shown),
 *    so a stripped function's pcs are one function; and a size-0 symbol
 *    (whose end is only a guess) does not reach into a later FDE's
 *    function. Parsed here (sym_fde_parse), not by libdw, whose CFI API
 *    answers "the FDE of this pc" but cannot list the FDEs.
 *  - Per struct sym: an intern pool (every string we return lives until
 *    sym_free, even when the module it came from is gone), the kallsyms
 *    table, perf map caches, and per module named the sources its names
 *    came from (sym_modules, for the help screen).
 *
 * Debug files are looked up under a root prefix: "/proc/PID/root" for a
 * live process, so the target's mount namespace decides which file we get
 * (proc(5)). Every such path, and the perf map, is opened through tfile
 * (openat2 RESOLVE_IN_ROOT, so absolute symlinks such as .build-id links
 * resolve inside that root, not ours; regular files only, checked on an
 * O_PATH fd before any real open; size caps). The root is taken the first
 * time a module is seen; later roots do not change a built table. A debug
 * file keeps no fd: it is mapped whole (space_elf_detached) and closed.
 *
 * .gnu_debuglink candidates: one whose build-id equals the module's is
 * taken without a CRC (the build-id is the stronger identity, and such a
 * file may be large); otherwise its CRC32 is computed only when it is at
 * most TFILE_CRC_MAX (256 MiB) long: a 4 GiB sparse file planted at the
 * path would otherwise freeze us for many seconds.
 *
 * perf map files (tools/perf/Documentation/jit-interface.txt): lines
 * "START SIZE name", hex without 0x, the name is the rest of the line. The
 * file is /tmp/perf-N.map where N is the pid in the target's own pid
 * namespace (last value of NSpid: in /proc/PID/status). As perf does, it is
 * trusted only if it is a regular file owned by the target's uid or root;
 * the last path component must not be a symlink, and a file over
 * TFILE_PERFMAP_MAX (64 MiB) is not read. It is re-checked at most once
 * a second and re-read when its inode, size or mtime changed. For
 * overlapping entries the later line wins (JITs reuse addresses).
 *
 * kallsyms: with perf_event_paranoid >= 2 (or kptr_restrict) an
 * unprivileged reader sees all-zero addresses; then every kernel address is
 * func NULL, module "[kernel]".
 *
 * debuginfod (--debuginfod, opt-in): when a file module has no .symtab of
 * its own nor a debug file here, its build-id is handed to dbgfetch (a
 * worker thread fetching in the background) and the module is kept
 * (referenced) on a waiting list. sym_fetched, on the caller's thread,
 * takes the files that arrived, checks their build-id, rebuilds those
 * modules' tables from them and bumps sym_names_gen, so frames re-names
 * what was unnamed. Without a dbgfetch, nothing of this runs.
 *
 * Nothing here prints or exits; errors are -errno. Not thread safe: one
 * struct sym is used by one thread (the module tables are shared, but are
 * built and read only under that same single-threaded use).
 */
#include "stacktop/symbols/dbgfetch.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/lib/mono.h"
#include "stacktop/lib/text.h"
#include "stacktop/proc/tfile.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define SYM_DEM_MAX 4096
#define PERFMAP_RECHECK_NS 1000000000ull
/* kallsyms has no sizes; the last text symbol gets this much. */
#define KSYM_LAST_SPAN 0x10000ull
/* Nested or overlapping symbols: how far back a lookup walks. */
#define SYM_WALK_BACK 4

/* ---- interning --------------------------------------------------------- */

struct ksym {
	uint64_t start, end;
	uint32_t name;
};

struct pm_ent {
	uint64_t start, end;
	uint32_t name;
	uint32_t seq; /* line number: later lines win on overlap */
};

/* One perf map file, keyed by (root, pid). */
struct perfmap {
	struct perfmap *next;
	char *root;
	pid_t pid;	/* key: host pid, or the namespace pid for sym_perfmap_lookup_at */
	bool from_proc; /* nspid/uid are re-read from /proc/PID/status */
	pid_t nspid;
	uid_t uid;
	uint64_t checked_ns;
	bool loaded; /* a trusted file was read */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct pm_ent *ents;
	size_t n;
	char *names;
};

struct sym {
	struct strpool pool;
	bool ksyms_loaded;
	bool ksyms_zero; /* no usable addresses: everything is [kernel] */
	struct ksym *ksyms;
	size_t nksyms;
	char *knames;
	struct perfmap *perfmaps;
	/* debuginfod: the fetcher (NULL: off), modules waiting for a file */
	struct dbgfetch *fetch;
	struct sym_wait *waiting;
	unsigned names_gen;
	struct sym_module_note *notes; /* modules named so far */
	size_t nnotes, notes_cap;
	/* anonymous executable code met with no trusted perf map: the
	 * namespace pid its /tmp/perf-PID.map would have (0: none) */
	pid_t jit_nomap_nspid;
	pid_t perfmap_missing; /* set by sym_perfmap_lookup: the map's nspid, 0: loaded */
};

struct sym_wait {
	struct sym_wait *next;
	struct module *mod; /* referenced */
};

/* ---- per-module table -------------------------------------------------- */

struct sym_fn {
	uint64_t start, end;
	uint32_t name;
	uint8_t rank; /* for alias choice: 2 global, 1 weak, 0 local */
	bool sized;   /* end is start + st_size, not guessed from the next symbol */
};

/* One inlined level at an address: the function and where it was called
 * from (in the next level out). Strings owned by the table. */
struct sym_inl {
	char *func;
	char *call_file; /* basename; NULL when unknown */
	int call_line;
};

/* A range of a DWARF subprogram and its DIE, for inline chains; off 0:
 * a function DWARF has no subprogram for (SUB_NO_CU: nor a CU). */
struct sym_sub {
	uint64_t start, end;
	Dwarf_Off off;
};

#define SUB_NO_CU ((Dwarf_Off)-1)

/* What DWARF says about one address: its line and its inline chain,
 * innermost first. */
struct sym_line {
	uint64_t addr;
	char *file; /* basename, owned; NULL when unknown */
	int line;
	bool used;
	uint8_t ninl;
	struct sym_inl *inl;
};

struct sym_table {
	struct sym_fn *fns;
	size_t n;
	char *names;
	size_t names_len, names_cap;
	char **dem; /* lazily demangled; == names + off when unchanged */
	char *root; /* where debug files are looked for */
	bool symtab;	  /* from a .symtab (the module's or a debug file's) */
	bool fetch_asked; /* handed to debuginfod */
	bool dbg_tried;
	Elf *dbg_elf; /* holds no fd */
	bool dw_tried;
	Dwarf *dw;
	struct sym_line *lines;
	size_t lines_cap, lines_used;
	unsigned source; /* SYM_SRC_SYMTAB, _DEBUG or _DYNSYM, or 0: no symbols */
	bool fde_tried;
	struct sym_range *fdes; /* function ranges from .eh_frame/.debug_frame */
	size_t nfde;
	struct sym_sub *subs; /* DWARF subprogram ranges seen, sorted */
	size_t nsubs, subs_cap;
};

/* ---- demangling -------------------------------------------------------- */

static bool is_hex_n(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* Rust legacy names end in "::h<16 hex>", a hash that only adds noise. */
static void strip_rust_hash(char *s)
{
	size_t len = strlen(s);

	if (len > 19 && !memcmp(s + len - 19, "::h", 3) && is_hex_n(s + len - 16, 16))
		s[len - 19] = '\0';
}

const char *sym_demangle(const char *name, char *buf, size_t size)
{
	char *d;

	if (!name || !size || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d)
		return name;
	strip_rust_hash(d);
	snprintf(buf, size, "%s", d);
	free(d);
	return buf;
}

/* ---- opening files under a root ---------------------------------------- */

/* Open path as seen from root ("" = our own view) through tfile: symlinks
 * resolve within root, only a regular file of at most max bytes is opened.
 * fd or -errno. */
static int open_under(const char *root, const char *path, unsigned flags, uint64_t max,
		      struct stat *st)
{
	int rootfd = tfile_root_open_path(root), fd;

	if (rootfd < 0 && rootfd != TFILE_OWN_ROOT)
		return rootfd;
	fd = tfile_open(rootfd, path, flags, max, st);
	tfile_root_close(rootfd);
	return fd;
}

/* ---- ELF helpers ------------------------------------------------------- */

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static Elf_Scn *find_section_type(Elf *elf, GElf_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	}
	return NULL;
}

static size_t elf_build_id(Elf *elf, uint8_t *out, size_t cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4)) {
				size_t len = nh.n_descsz < cap ? nh.n_descsz : cap;

				memcpy(out, (char *)d->d_buf + doff, len);
				return len;
			}
		}
	}
	return 0;
}

/* Has a real (not NOBITS) section of this type or name. */
static bool has_symtab(Elf *elf)
{
	GElf_Shdr sh;

	return find_section_type(elf, SHT_SYMTAB, &sh) && sh.sh_size > 0;
}

static bool has_dwarf(Elf *elf)
{
	GElf_Shdr sh;

	return (find_section(elf, ".debug_info", &sh) || find_section(elf, ".zdebug_info", &sh)) &&
	       sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

/* ---- debug files ------------------------------------------------------- */

static int try_build_id(struct sym_table *t, const struct module *mod)
{
	char path[PATH_MAX], *p = path;
	uint8_t id[20];
	size_t i, len;
	int fd;
	Elf *e;

	if (mod->build_id_len < 2)
		return -ENOENT;
	p += sprintf(p, "/usr/lib/debug/.build-id/%02x/", mod->build_id[0]);
	for (i = 1; i < mod->build_id_len; i++)
		p += sprintf(p, "%02x", mod->build_id[i]);
	strcpy(p, ".debug");
	fd = open_under(t->root, path, 0, TFILE_ELF_MAX, NULL);
	if (fd < 0)
		return fd;
	e = space_elf_detached(fd);
	close(fd);
	len = e ? elf_build_id(e, id, sizeof(id)) : 0;
	if (!e || len != mod->build_id_len || memcmp(id, mod->build_id, len)) {
		if (e)
			elf_end(e);
		return -ENOENT;
	}
	t->dbg_elf = e;
	return 0;
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
	size_t len = elf_build_id(e, id, sizeof(id));
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
	Elf_Scn *scn = find_section(elf, ".gnu_debuglink", &sh);
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

static int try_debuglink(struct sym_table *t, const struct module *mod)
{
	char name[256], dir[PATH_MAX], path[PATH_MAX];
	const char *fmt[] = {"%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s"};
	uint32_t want = 0;
	const char *slash;
	size_t i;

	if (read_debuglink(mod->elf, name, sizeof(name), &want))
		return -ENOENT;
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

		fd = open_under(t->root, path, 0, TFILE_ELF_MAX, &st);
		if (fd < 0)
			continue;
		/* The link may name the binary itself (same dir, same name). */
		if (st.st_ino == mod->ino && st.st_dev == mod->dev) {
			close(fd);
			continue;
		}
		e = space_elf_detached(fd);
		if (e && debuglink_matches(fd, &st, e, mod, want)) {
			close(fd);
			t->dbg_elf = e;
			return 0;
		}
		if (e)
			elf_end(e);
		close(fd);
	}
	return -ENOENT;
}

/* The separate debug file, found once; NULL when there is none. */
static Elf *table_debug_elf(struct sym_table *t, const struct module *mod)
{
	if (t->dbg_tried)
		return t->dbg_elf;
	t->dbg_tried = true;
	/* Only files have debug files: not [vdso], not an unopened module. */
	if (!mod->elf || !mod->path || mod->path[0] != '/')
		return NULL;
	if (try_build_id(t, mod) && try_debuglink(t, mod))
		return NULL;
	return t->dbg_elf;
}

/* ---- building the function table --------------------------------------- */

/* Append the string s to a names pool (*buf, *len bytes used of *cap) and
 * say where it starts: the tables keep 32-bit offsets, not pointers, so the
 * pool may move while it grows. */
static int names_push(char **buf, size_t *len, size_t *cap, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (*len + n > UINT32_MAX)
		return -E2BIG;
	if (array_grow((void **)buf, cap, *len + n, 1))
		return -ENOMEM;
	memcpy(*buf + *len, s, n);
	*off = (uint32_t)*len;
	*len += n;
	return 0;
}

static int names_add(struct sym_table *t, const char *s, uint32_t *off)
{
	return names_push(&t->names, &t->names_len, &t->names_cap, s, off);
}

static bool want_symbol(const GElf_Sym *s, const GElf_Shdr *sec)
{
	int type = GELF_ST_TYPE(s->st_info);

	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE || s->st_value == 0)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	/* Assembly often leaves functions untyped; keep them if sized code. */
	return type == STT_NOTYPE && s->st_size > 0 && (sec->sh_flags & SHF_EXECINSTR);
}

static uint8_t bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

/* Collect the functions of one symbol section of elf into t. The section
 * end of each symbol is stored in end temporarily (for size-0 symbols). */
static int table_add_symbols(struct sym_table *t, Elf *elf, GElf_Word type, size_t *cap)
{
	GElf_Shdr sh, sec;
	Elf_Scn *scn = find_section_type(elf, type, &sh);
	Elf_Data *d;
	size_t i, count;
	int err;

	if (!scn || sh.sh_type == SHT_NOBITS || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
		return -ENOENT;
	count = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < count; i++) {
		GElf_Sym s;
		const char *name;
		struct sym_fn *f;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    !gelf_getshdr(elf_getscn(elf, s.st_shndx), &sec) || !want_symbol(&s, &sec))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !name[0])
			continue;
		if (array_grow((void **)&t->fns, cap, t->n + 1, sizeof(*t->fns)))
			return -ENOMEM;
		f = &t->fns[t->n];
		err = names_add(t, name, &f->name);
		if (err)
			return err;
		f->start = s.st_value;
		f->end = s.st_size ? s.st_value + s.st_size : 0;
		/* Bound a size-0 symbol by its section (sh_addr is the same in
		 * a debug file, whose sections are NOBITS). */
		if (!s.st_size)
			f->end = (sec.sh_addr + sec.sh_size > s.st_value)
				     ? (sec.sh_addr + sec.sh_size) | (1ull << 63)
				     : s.st_value + 1;
		f->rank = bind_rank(&s);
		f->sized = s.st_size != 0;
		t->n++;
	}
	return 0;
}

static const struct sym_table *cmp_table;

static int fn_cmp(const void *a, const void *b)
{
	const struct sym_fn *x = a, *y = b;
	uint64_t xs = (x->end >> 63) ? 0 : x->end - x->start;
	uint64_t ys = (y->end >> 63) ? 0 : y->end - y->start;
	const char *xn, *yn;
	size_t xu, yu, xl, yl;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if ((xs != 0) != (ys != 0))
		return xs ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	xn = cmp_table->names + x->name;
	yn = cmp_table->names + y->name;
	/* As perf does: fewer leading underscores (printf over _IO_printf,
	 * malloc over __libc_malloc), then the longer name. */
	xu = strspn(xn, "_");
	yu = strspn(yn, "_");
	if (xu != yu)
		return xu < yu ? -1 : 1;
	xl = strlen(xn);
	yl = strlen(yn);
	if (xl != yl)
		return xl > yl ? -1 : 1;
	return strcmp(xn, yn);
}

/* Sort, drop aliases, and give size-0 symbols their end. */
static void table_finish(struct sym_table *t)
{
	size_t i, j = 0;

	cmp_table = t;
	if (t->n)
		qsort(t->fns, t->n, sizeof(*t->fns), fn_cmp);
	cmp_table = NULL;
	for (i = 0; i < t->n; i++) {
		if (j && t->fns[j - 1].start == t->fns[i].start)
			continue;
		t->fns[j++] = t->fns[i];
	}
	t->n = j;
	for (i = 0; i < t->n; i++) {
		struct sym_fn *f = &t->fns[i];

		if (!(f->end >> 63))
			continue;
		f->end &= ~(1ull << 63);
		if (i + 1 < t->n && t->fns[i + 1].start < f->end)
			f->end = t->fns[i + 1].start;
	}
}

static void line_clear(struct sym_line *l)
{
	free(l->file);
	for (unsigned k = 0; k < l->ninl; k++) {
		free(l->inl[k].func);
		free(l->inl[k].call_file);
	}
	free(l->inl);
}

static void table_free(void *p)
{
	struct sym_table *t = p;
	size_t i;

	if (!t)
		return;
	for (i = 0; t->dem && i < t->n; i++) {
		if (t->dem[i] && t->dem[i] != t->names + t->fns[i].name)
			free(t->dem[i]);
	}
	for (i = 0; i < t->lines_cap; i++)
		line_clear(&t->lines[i]);
	free(t->lines);
	free(t->fdes);
	free(t->subs);
	if (t->dw)
		dwarf_end(t->dw);
	if (t->dbg_elf)
		elf_end(t->dbg_elf);
	free(t->dem);
	free(t->fns);
	free(t->names);
	free(t->root);
	free(t);
}

/* fetched: a debug file that came from debuginfod (the table takes it),
 * or NULL to look for one here. */
static int table_build(const struct module *mod, const char *root, Elf *fetched,
		       struct sym_table **out)
{
	struct sym_table *t = calloc(1, sizeof(*t));
	size_t cap = 0;
	Elf *dbg;
	int err = 0;

	if (!t || !(t->root = strdup(root ? root : ""))) {
		free(t);
		if (fetched)
			elf_end(fetched);
		return -ENOMEM;
	}
	if (fetched) {
		t->dbg_tried = true;
		t->dbg_elf = fetched;
		t->fetch_asked = true;
	}
	t->symtab = true;
	if (has_symtab(mod->elf)) {
		err = table_add_symbols(t, mod->elf, SHT_SYMTAB, &cap);
		t->source = SYM_SRC_SYMTAB;
	} else if ((dbg = table_debug_elf(t, mod)) && has_symtab(dbg)) {
		err = table_add_symbols(t, dbg, SHT_SYMTAB, &cap);
		t->source = SYM_SRC_DEBUG;
	} else {
		t->symtab = false;
		err = table_add_symbols(t, mod->elf, SHT_DYNSYM, &cap);
		t->source = SYM_SRC_DYNSYM;
	}
	if (err && err != -ENOENT)
		goto fail;
	table_finish(t);
	if (!t->n)
		t->source = 0;
	if (t->n) {
		t->dem = calloc(t->n, sizeof(*t->dem));
		if (!t->dem) {
			err = -ENOMEM;
			goto fail;
		}
	}
	*out = t;
	return 0;
fail:
	table_free(t);
	return err;
}

/* The module's table, built on first use. */
static int table_get(struct module *mod, const char *root, struct sym_table **out)
{
	int err;

	if (mod->ext[SPACE_EXT_SYM]) {
		*out = mod->ext[SPACE_EXT_SYM];
		return 0;
	}
	err = table_build(mod, root, NULL, out);
	if (err)
		return err;
	mod->ext[SPACE_EXT_SYM] = *out;
	mod->ext_free[SPACE_EXT_SYM] = table_free;
	return 0;
}

/* In an array of n elements of size bytes sorted by the uint64_t at offset
 * off (their start), the number of elements starting at or below key: the
 * last one that may hold key is at the result - 1. */
static size_t upper_bound(const void *arr, size_t n, size_t size, size_t off, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&start, (const char *)arr + mid * size + off, sizeof(start));
		if (start <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* upper_bound of key in an array of structs with a uint64_t start. */
#define STARTS_AT_OR_BELOW(arr, n, key)                                                            \
	upper_bound((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), start), (key))

/* Index of the function holding addr, or -1. */
static long table_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = STARTS_AT_OR_BELOW(t->fns, t->n, addr), k;
	long i;

	/* lo - 1 is the last start <= addr; a nested or overlapping symbol
	 * may end before addr while an earlier one still covers it. */
	for (k = 0, i = (long)lo - 1; i >= 0 && k < SYM_WALK_BACK; i--, k++) {
		if (addr < t->fns[i].end)
			return i;
	}
	return -1;
}

static const char *table_name(struct sym_table *t, long i)
{
	char buf[SYM_DEM_MAX];
	const char *raw = t->names + t->fns[i].name, *d;

	if (t->dem[i])
		return t->dem[i];
	d = sym_demangle(raw, buf, sizeof(buf));
	/* "clock_gettime@@GLIBC_2.17": the symbol version is noise on screen. */
	if (d == raw && raw[0] != '@' && strchr(raw, '@')) {
		snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(raw, "@"), raw);
		d = buf;
	}
	char *copy = d == raw ? NULL : strdup(d);
	t->dem[i] = copy ? copy : (char *)raw;
	return t->dem[i];
}

/* ---- function ranges (FDEs) -------------------------------------------- */

/*
 * .eh_frame and .debug_frame hold one FDE per function (its range), even
 * in a stripped file: they are what a stripped function is told apart by.
 * The format (LSB "Exception Frames", DWARF 5 §6.4.1): entries of
 * length (4 bytes, or 0xffffffff and 8), a CIE id or CIE pointer, then the
 * body. A CIE's augmentation "zR" gives the FDE pointer encoding
 * (DW_EH_PE_*); an FDE starts with its pc_begin in that encoding and its
 * pc_range in the same format. Only the encodings compilers emit for
 * pc_begin are read (absolute or pc-relative, fixed or LEB128); an FDE in
 * any other is skipped. Little-endian, 64-bit (x86-64 only, as unwind.c).
 */

#define EH_PE_OMIT 0xff
#define EH_PE_PCREL 0x10

struct rd {
	const uint8_t *p, *end;
};

static bool rd_u(struct rd *r, unsigned bytes, uint64_t *v)
{
	if ((size_t)(r->end - r->p) < bytes)
		return false;
	*v = 0;
	for (unsigned i = 0; i < bytes; i++)
		*v |= (uint64_t)r->p[i] << (8 * i);
	r->p += bytes;
	return true;
}

static bool rd_uleb(struct rd *r, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

static bool rd_sleb(struct rd *r, int64_t *v)
{
	unsigned shift = 0;
	uint64_t u = 0;
	uint8_t b = 0;

	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				u |= ~0ull << shift;
			*v = (int64_t)u;
			return true;
		}
	}
	return false;
}

/* A value in the format (low 4 bits) of a DW_EH_PE encoding. */
static bool rd_format(struct rd *r, uint8_t enc, uint64_t *v)
{
	static const unsigned size[16] = {
	    [0] = 8, [2] = 2, [3] = 4, [4] = 8, [0xa] = 2, [0xb] = 4, [0xc] = 8};
	unsigned f = enc & 0x0f;
	int64_t sv;

	if (f == 0x01)
		return rd_uleb(r, v);
	if (f == 0x09) {
		if (!rd_sleb(r, &sv))
			return false;
		*v = (uint64_t)sv;
		return true;
	}
	if (!size[f] || !rd_u(r, size[f], v))
		return false;
	if (f >= 0xa && size[f] < 8 && (*v >> (size[f] * 8 - 1) & 1)) /* sign-extend */
		*v |= ~0ull << (size[f] * 8);
	return true;
}

/* A pointer in encoding enc whose field is at address here. */
static bool rd_pointer(struct rd *r, uint8_t enc, uint64_t here, uint64_t *v)
{
	if (enc == EH_PE_OMIT || (enc & 0x80) || !rd_format(r, enc, v))
		return false;
	switch (enc & 0x70) {
	case 0:
		return true;
	case EH_PE_PCREL:
		*v += here;
		return true;
	default: /* textrel, datarel, funcrel, aligned: not used for pc_begin */
		return false;
	}
}

/* Entry header at off: its body [*body, *next) and the id field. */
static bool entry_header(const uint8_t *data, size_t size, size_t off, struct rd *body,
			 size_t *next, uint64_t *id, size_t *id_off, bool *is64)
{
	struct rd r = {data + off, data + size};
	uint64_t len;

	if (!rd_u(&r, 4, &len))
		return false;
	*is64 = len == 0xffffffffull;
	if (*is64 && !rd_u(&r, 8, &len))
		return false;
	if (len == 0 || len > (uint64_t)(r.end - r.p))
		return false;
	*next = (size_t)(r.p - data) + (size_t)len;
	r.end = r.p + len;
	*id_off = (size_t)(r.p - data);
	if (!rd_u(&r, *is64 ? 8 : 4, id))
		return false;
	*body = r;
	return true;
}

/* The FDE pointer encoding of the CIE at off. */
static bool cie_encoding(const uint8_t *data, size_t size, size_t off, bool debug_frame,
			 uint8_t *enc)
{
	struct rd r;
	size_t next, id_off;
	uint64_t id, u, len;
	int64_t sv;
	bool is64;
	uint8_t version;
	const char *aug;
	size_t auglen;

	if (off >= size || !entry_header(data, size, off, &r, &next, &id, &id_off, &is64))
		return false;
	if (debug_frame ? id != (is64 ? ~0ull : 0xffffffffull) : id != 0)
		return false; /* not a CIE */
	if (!rd_u(&r, 1, &u))
		return false;
	version = (uint8_t)u;
	aug = (const char *)r.p;
	auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (auglen == (size_t)(r.end - r.p))
		return false;
	r.p += auglen + 1;
	*enc = 0;		  /* absptr */
	if (!strcmp(aug, "eh")) { /* an old GCC's pointer to its EH data */
		if (r.end - r.p < 8)
			return false;
		r.p += 8;
	}
	if (version >= 4 && !rd_u(&r, 2, &u)) /* address_size, segment_selector_size */
		return false;
	if (!rd_uleb(&r, &u) || !rd_sleb(&r, &sv))
		return false;
	if (version == 1 ? !rd_u(&r, 1, &u) : !rd_uleb(&r, &u))
		return false;
	if (aug[0] != 'z')
		return aug[0] == '\0' || !strcmp(aug, "eh");
	if (!rd_uleb(&r, &len) || len > (uint64_t)(r.end - r.p))
		return false;
	r.end = r.p + len;
	for (const char *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'R':
			if (!rd_u(&r, 1, &u))
				return false;
			*enc = (uint8_t)u;
			return true;
		case 'L':
			if (!rd_u(&r, 1, &u))
				return false;
			break;
		case 'P':
			if (!rd_u(&r, 1, &u) || !rd_format(&r, (uint8_t)u, &u))
				return false;
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false; /* unknown: the rest cannot be read */
		}
	}
	return true;
}

static int range_cmp(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int sym_fde_parse(const uint8_t *data, size_t size, uint64_t addr, bool debug_frame,
		  struct sym_range **out, size_t *n)
{
	struct sym_range *v = NULL;
	size_t cap = 0, cnt = 0, off = 0, next, id_off, last_cie = SIZE_MAX;
	uint8_t enc = 0;

	*out = NULL;
	*n = 0;
	while (off + 4 <= size) {
		struct rd r;
		uint64_t id, start, len;
		size_t cie;
		bool is64;

		if (!entry_header(data, size, off, &r, &next, &id, &id_off, &is64))
			break; /* a zero terminator or a broken length: nothing more to trust */
		if (debug_frame ? id == (is64 ? ~0ull : 0xffffffffull) : id == 0)
			goto skip; /* a CIE */
		if (debug_frame)
			cie = id < size ? (size_t)id : SIZE_MAX;
		else
			cie = id <= id_off ? id_off - (size_t)id : SIZE_MAX;
		if (cie != last_cie) {
			last_cie = SIZE_MAX;
			if (!cie_encoding(data, size, cie, debug_frame, &enc))
				goto skip;
			last_cie = cie;
		}
		if (!rd_pointer(&r, enc, addr + (uint64_t)(r.p - data), &start) ||
		    !rd_format(&r, enc, &len) || !len || start + len < start)
			goto skip;
		if (array_grow((void **)&v, &cap, cnt + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[cnt++] = (struct sym_range){start, start + len};
	skip:
		off = next;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), range_cmp);
	*out = v;
	*n = cnt;
	return 0;
}

/* Append the FDE ranges of section name of elf to t. */
static int fdes_add(struct sym_table *t, Elf *elf, const char *name, bool debug_frame)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, name, &sh);
	Elf_Data *d;
	struct sym_range *v;
	size_t n;
	int err;

	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
		return 0;
	err = sym_fde_parse(d->d_buf, d->d_size, sh.sh_addr, debug_frame, &v, &n);
	if (err || !n)
		return err;
	if (!t->nfde) {
		t->fdes = v;
		t->nfde = n;
		return 0;
	}
	struct sym_range *all = realloc(t->fdes, (t->nfde + n) * sizeof(*all));
	if (!all) {
		free(v);
		return -ENOMEM;
	}
	memcpy(all + t->nfde, v, n * sizeof(*v));
	free(v);
	t->fdes = all;
	t->nfde += n;
	qsort(t->fdes, t->nfde, sizeof(*t->fdes), range_cmp);
	return 0;
}

/* The FDE range holding addr, or NULL; the table of ranges is built from
 * the module's own .eh_frame and .debug_frame on first use. */
static const struct sym_range *table_fde(struct sym_table *t, const struct module *mod,
					 uint64_t addr)
{
	size_t lo;

	if (!t->fde_tried) {
		t->fde_tried = true;
		if (fdes_add(t, mod->elf, ".eh_frame", false) ||
		    fdes_add(t, mod->elf, ".debug_frame", true)) {
			free(t->fdes);
			t->fdes = NULL;
			t->nfde = 0;
		}
	}
	lo = STARTS_AT_OR_BELOW(t->fdes, t->nfde, addr);
	/* Ranges do not nest: the last start at or below addr is the one. */
	if (lo == 0 || addr >= t->fdes[lo - 1].end)
		return NULL;
	return &t->fdes[lo - 1];
}

/* The file offset of an ELF address (through its PT_LOAD), as the views
 * show addresses without a name; the address itself outside every load. */
static uint64_t elf_file_offset(Elf *elf, uint64_t addr)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return addr;
	for (i = 0; i < n; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr < ph.p_vaddr + ph.p_memsz)
			return addr - ph.p_vaddr + ph.p_offset;
	}
	return addr;
}

/* ---- lines ------------------------------------------------------------- */

static Dwarf *table_dwarf(struct sym_table *t, const struct module *mod)
{
	Elf *e = NULL;

	if (t->dw_tried)
		return t->dw;
	t->dw_tried = true;
	if (mod->elf && has_dwarf(mod->elf))
		e = mod->elf;
	else if (mod->elf)
		e = table_debug_elf(t, mod);
	if (e)
		t->dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	return t->dw;
}

/* CU holding addr: aranges first, then a scan (GCC may omit aranges). */
static bool find_cu(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(dw, addr, cu))
		return true;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) > 0)
			return true;
		off = next;
	}
	return false;
}

/* The name of a subprogram or inlined-subroutine DIE (through its
 * abstract origin), demangled; malloc'd, NULL on ENOMEM. */
static char *die_func_name(Dwarf_Die *die)
{
	char buf[SYM_DEM_MAX];
	Dwarf_Attribute a;
	const char *n = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	if (!n && dwarf_attr_integrate(die, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	return strdup(n ? sym_demangle(n, buf, sizeof(buf)) : "[inlined]");
}

/* Where an inlined subroutine was called from: DW_AT_call_file (an index
 * into the CU's file table) and DW_AT_call_line. */
static void die_call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, struct sym_inl *out)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	const char *f;

	if (files && dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
	    w < nfiles && (f = dwarf_filesrc(files, w, NULL, NULL)))
		out->call_file = strdup(text_basename(f));
	if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0 && w <= INT_MAX)
		out->call_line = (int)w;
}

/* Is tag a DIE whose children may hold inlined code at a pc it covers? */
static bool scope_tag(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/* The inlined subroutines under fn holding addr, outermost first, into
 * out[0..max); returns how many. Only the subtree of one function is
 * walked, one level at a time (a loop, not recursion: the DWARF is the
 * target's, and may nest without end): the scopes that hold addr nest. */
static int walk_inlined(Dwarf_Die *fn, uint64_t addr, Dwarf_Die *out, int max)
{
	Dwarf_Die parent = *fn, c;
	int n = 0;

	while (dwarf_child(&parent, &c) == 0) {
		bool down = false;

		do {
			int tag = dwarf_tag(&c);

			if (!scope_tag(tag) || dwarf_haspc(&c, addr) <= 0)
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				if (n >= max)
					return n;
				out[n++] = c;
			}
			down = true;
			break;
		} while (dwarf_siblingof(&c, &c) == 0);
		if (!down)
			break;
		parent = c;
	}
	return n;
}

/* The subprogram DIE holding addr among parent's children (and in
 * namespaces and classes, where C++ puts some definitions, at most
 * SUB_NEST_MAX deep: the DWARF is the target's). */
#define SUB_NEST_MAX 8
static bool find_subprogram(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;

	if (depth > SUB_NEST_MAX || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_subprogram && dwarf_haspc(&c, addr) > 0) {
			*out = c;
			return true;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type) &&
		    find_subprogram(&c, addr, out, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* Remember [start, end) as part of the subprogram at off (kept sorted). */
static void subs_add(struct sym_table *t, uint64_t start, uint64_t end, Dwarf_Off off)
{
	size_t i = STARTS_AT_OR_BELOW(t->subs, t->nsubs, start);

	if (start >= end || (i && t->subs[i - 1].start == start))
		return;
	if (array_grow((void **)&t->subs, &t->subs_cap, t->nsubs + 1, sizeof(*t->subs)))
		return; /* a cache: without it the next lookup walks again */
	memmove(&t->subs[i + 1], &t->subs[i], (t->nsubs - i) * sizeof(*t->subs));
	t->subs[i] = (struct sym_sub){start, end, off};
	t->nsubs++;
}

/* The subprogram DIE holding addr: from the cache of subprogram ranges
 * seen, else found among the CU's children once (a walk over every
 * top-level DIE of the CU, as dwarf_getscopes would do for every pc). */
static bool subprogram_of(struct sym_table *t, Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out)
{
	size_t i = STARTS_AT_OR_BELOW(t->subs, t->nsubs, addr);
	Dwarf_Addr base, s, e;
	ptrdiff_t off = 0;

	long f;

	if (i && addr < t->subs[i - 1].end)
		return t->subs[i - 1].off && t->subs[i - 1].off != SUB_NO_CU &&
		       dwarf_offdie(t->dw, t->subs[i - 1].off, out);
	if (!find_subprogram(cu, addr, out, 0)) {
		/* Code DWARF describes no function for (assembly): remember
		 * its symbol's range as such, or every pc would walk the CU. */
		if ((f = table_find(t, addr)) >= 0)
			subs_add(t, t->fns[f].start, t->fns[f].end, 0);
		return false;
	}
	while ((off = dwarf_ranges(out, off, &base, &s, &e)) > 0)
		subs_add(t, s, e, dwarf_dieoffset(out));
	return true;
}

/* The inlined subroutines holding addr, innermost first, with their call
 * sites. Walked down from the function holding addr (found once per
 * function): dwarf_getscopes would walk the whole CU for every pc, ~200 µs
 * in a libc CU. */
static void lookup_inline(struct sym_table *t, Dwarf_Die *cu, uint64_t addr, struct sym_line *out)
{
	Dwarf_Die sub, chain[SYM_INLINE_MAX];
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	int n, k;

	if (!subprogram_of(t, cu, addr, &sub))
		return;
	n = walk_inlined(&sub, addr, chain, SYM_INLINE_MAX);
	if (n <= 0 || !(out->inl = calloc((size_t)n, sizeof(*out->inl))))
		return;
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (k = n - 1; k >= 0; k--) {
		struct sym_inl *in = &out->inl[out->ninl];

		if (!(in->func = die_func_name(&chain[k])))
			break;
		die_call_site(&chain[k], files, nfiles, in);
		out->ninl++;
	}
}

/* Is addr in a function known to lie in no CU? */
static bool no_cu_at(const struct sym_table *t, uint64_t addr)
{
	size_t i = STARTS_AT_OR_BELOW(t->subs, t->nsubs, addr);

	return i && addr < t->subs[i - 1].end && t->subs[i - 1].off == SUB_NO_CU;
}

static void lookup_line(struct sym_table *t, Dwarf *dw, uint64_t addr, struct sym_line *out)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	const char *src;
	int line;

	out->file = NULL;
	out->line = 0;
	out->ninl = 0;
	out->inl = NULL;
	if (!dw || no_cu_at(t, addr))
		return;
	if (!find_cu(dw, addr, &cu)) {
		/* No CU (assembly without -g): the scan of every CU that
		 * found nothing is not repeated for the function's other pcs. */
		long f = table_find(t, addr);

		if (f >= 0)
			subs_add(t, t->fns[f].start, t->fns[f].end, SUB_NO_CU);
		return;
	}
	lookup_inline(t, &cu, addr, out);
	if (!(l = dwarf_getsrc_die(&cu, addr)))
		return;
	src = dwarf_linesrc(l, NULL, NULL);
	if (dwarf_lineno(l, &line) == 0)
		out->line = line;
	if (src)
		out->file = strdup(text_basename(src));
}

static int lines_grow(struct sym_table *t)
{
	size_t ncap = t->lines_cap ? t->lines_cap * 2 : 64, i;
	struct sym_line *nl = calloc(ncap, sizeof(*nl));

	if (!nl)
		return -ENOMEM;
	for (i = 0; i < t->lines_cap; i++) {
		size_t j;

		if (!t->lines[i].used)
			continue;
		for (j = (t->lines[i].addr * 0x9e3779b97f4a7c15ull >> 20) & (ncap - 1); nl[j].used;
		     j = (j + 1) & (ncap - 1))
			;
		nl[j] = t->lines[i];
	}
	free(t->lines);
	t->lines = nl;
	t->lines_cap = ncap;
	return 0;
}

/* file:line of an ELF address, cached per table. */
static int table_line(struct sym_table *t, const struct module *mod, uint64_t addr,
		      const struct sym_line **out)
{
	size_t j;
	int err;

	if (t->lines_used * 2 >= t->lines_cap && (err = lines_grow(t)))
		return err;
	for (j = (addr * 0x9e3779b97f4a7c15ull >> 20) & (t->lines_cap - 1); t->lines[j].used;
	     j = (j + 1) & (t->lines_cap - 1)) {
		if (t->lines[j].addr == addr) {
			*out = &t->lines[j];
			return 0;
		}
	}
	lookup_line(t, table_dwarf(t, mod), addr, &t->lines[j]);
	t->lines[j].addr = addr;
	t->lines[j].used = true;
	t->lines_used++;
	*out = &t->lines[j];
	return 0;
}

/* ---- user space -------------------------------------------------------- */

int sym_new(struct sym **out)
{
	struct sym *sy = calloc(1, sizeof(*sy));

	if (!sy)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	*out = sy;
	return 0;
}

static void perfmap_clear(struct perfmap *pm)
{
	free(pm->ents);
	free(pm->names);
	pm->ents = NULL;
	pm->names = NULL;
	pm->n = 0;
	pm->loaded = false;
}

void sym_free(struct sym *sy)
{
	struct perfmap *pm, *next;

	if (!sy)
		return;
	while (sy->waiting) {
		struct sym_wait *w = sy->waiting;

		sy->waiting = w->next;
		space_module_put(w->mod);
		free(w);
	}
	for (pm = sy->perfmaps; pm; pm = next) {
		next = pm->next;
		perfmap_clear(pm);
		free(pm->root);
		free(pm);
	}
	free(sy->ksyms);
	free(sy->knames);
	free(sy->notes);
	strpool_free(&sy->pool);
	free(sy);
}

/* ---- debuginfod ---------------------------------------------------------- */

void sym_set_fetch(struct sym *sy, struct dbgfetch *f)
{
	sy->fetch = f;
}

unsigned sym_names_gen(const struct sym *sy)
{
	return sy->names_gen;
}

bool sym_names_may_change(const struct sym *sy)
{
	return sy->fetch != NULL;
}

/* Ask once per table; only files with a build-id can be fetched. */
static void fetch_ask(struct sym *sy, struct module *mod, struct sym_table *t)
{
	struct sym_wait *w;

	t->fetch_asked = true;
	if (!mod->path || mod->path[0] != '/' || mod->build_id_len == 0)
		return;
	w = calloc(1, sizeof(*w));
	if (!w)
		return;
	if (dbgfetch_want(sy->fetch, mod->build_id, mod->build_id_len) != 0) {
		free(w);
		return;
	}
	space_module_get(mod);
	w->mod = mod;
	w->next = sy->waiting;
	sy->waiting = w;
}

/* A fetched file for build-id id: every waiting module with that id gets
 * its table rebuilt from it. The file is in our own file system (the
 * client cache), opened like any other: regular, capped, no fd kept. */
static void fetch_got(void *ctx, const uint8_t *id, size_t len, const char *path)
{
	struct sym *sy = ctx;
	struct sym_wait **pp = &sy->waiting, *w;

	while ((w = *pp)) {
		struct module *mod = w->mod;
		struct sym_table *old = mod->ext[SPACE_EXT_SYM], *t;
		uint8_t got[20];
		Elf *e = NULL;
		int fd;

		if (mod->build_id_len != len || memcmp(mod->build_id, id, len)) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		fd = open_under("", path, 0, TFILE_ELF_MAX, NULL);
		if (fd >= 0) {
			e = space_elf_detached(fd);
			close(fd);
		}
		if (e && (elf_build_id(e, got, sizeof(got)) != len || memcmp(got, id, len) ||
			  !has_symtab(e))) {
			elf_end(e);
			e = NULL;
		}
		/* the new table owns e, also when it fails (and frees it) */
		if (e && table_build(mod, old ? old->root : "", e, &t) == 0) {
			if (old)
				table_free(old);
			mod->ext[SPACE_EXT_SYM] = t;
			mod->ext_free[SPACE_EXT_SYM] = table_free;
			sy->names_gen++;
		}
		space_module_put(mod);
		free(w);
	}
}

int sym_fetched(struct sym *sy)
{
	return sy->fetch ? dbgfetch_poll(sy->fetch, fetch_got, sy) : 0;
}

/* Remember that module name (pooled) was named from sources. A short
 * list searched linearly: it is touched once per new pc, not per sample. */
static void note_module(struct sym *sy, const char *name, unsigned sources)
{
	size_t i;

	for (i = 0; i < sy->nnotes; i++) {
		if (sy->notes[i].name == name) {
			sy->notes[i].sources |= sources;
			return;
		}
	}
	if (sy->nnotes >= 4096 ||
	    array_grow((void **)&sy->notes, &sy->notes_cap, sy->nnotes + 1, sizeof(*sy->notes)))
		return; /* a note is for people: losing one is no error */
	sy->notes[sy->nnotes++] = (struct sym_module_note){name, sources};
}

size_t sym_modules(const struct sym *sy, const struct sym_module_note **out)
{
	*out = sy->notes;
	return sy->nnotes;
}

/* Is addr inside .plt, .plt.sec or .plt.got? */
static bool in_plt(Elf *elf, uint64_t addr)
{
	static const char *const names[] = {".plt", ".plt.sec", ".plt.got"};
	GElf_Shdr sh;

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (find_section(elf, names[k], &sh) && addr >= sh.sh_addr &&
		    addr < sh.sh_addr + sh.sh_size)
			return true;
	return false;
}

static int name_by_fde(struct sym *sy, struct sym_table *t, const struct module *mod,
		       uint64_t elf_addr, struct sym_info *out);

int sym_resolve_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
		       bool want_line, struct sym_info *out)
{
	struct sym_table *t;
	const struct sym_line *ln;
	long i;
	int err;

	memset(out, 0, sizeof(*out));
	out->module = strpool_cstr(&sy->pool, mod->name ? mod->name : "[unknown]");
	if (!out->module)
		return -ENOMEM;
	out->offset = elf_addr;
	if (!mod->elf)
		return 0;
	err = table_get(mod, root, &t);
	if (err)
		return err;
	if (!t->symtab && !t->fetch_asked && sy->fetch)
		fetch_ask(sy, mod, t);
	i = table_find(t, elf_addr);
	if (i >= 0 && !t->fns[i].sized) {
		/* A size-0 symbol's end is a guess (the next symbol); an FDE
		 * starting after it says the pc is in another function. */
		const struct sym_range *r = table_fde(t, mod, elf_addr);

		if (r && r->start > t->fns[i].start)
			i = -1;
	}
	if (i >= 0) {
		out->func = strpool_cstr(&sy->pool, table_name(t, i));
		if (!out->func)
			return -ENOMEM;
		out->offset = elf_addr - t->fns[i].start;
		out->func_start = t->fns[i].start;
		out->func_size = t->fns[i].end - t->fns[i].start;
		note_module(sy, out->module, t->source);
	} else if (in_plt(mod->elf, elf_addr)) {
		/* A call through the PLT: no symbol covers the stubs, but the
		 * section says what they are (perf shows them the same way). */
		out->func = "[plt]";
		out->func_start = elf_addr & ~(uint64_t)15;
		out->func_size = 16;
		out->offset = elf_addr - out->func_start;
	} else if ((err = name_by_fde(sy, t, mod, elf_addr, out)) != 0) {
		return err;
	}
	if (!want_line)
		return 0;
	err = table_line(t, mod, elf_addr, &ln);
	if (err)
		return err;
	/* In inlined code the line in the function named is the call of the
	 * outermost inlined level; the pc's own line is the innermost's. */
	const char *file = ln->ninl ? ln->inl[ln->ninl - 1].call_file : ln->file;
	if (file && !(out->file = strpool_cstr(&sy->pool, file)))
		return -ENOMEM;
	out->line = ln->ninl ? ln->inl[ln->ninl - 1].call_line : ln->line;
	return 0;
}

/* No symbol: name the pc by the FDE that holds it, "module!0xSTART" with
 * the start as a file offset, so the function's pcs share one name.
 * Without an FDE, func stays NULL (the views show module+offset). */
static int name_by_fde(struct sym *sy, struct sym_table *t, const struct module *mod,
		       uint64_t elf_addr, struct sym_info *out)
{
	const struct sym_range *r = table_fde(t, mod, elf_addr);
	char buf[512];

	if (!r) {
		note_module(sy, out->module, SYM_SRC_NONE);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s!0x%" PRIx64, out->module,
		 elf_file_offset(mod->elf, r->start));
	if (!(out->func = strpool_cstr(&sy->pool, buf)))
		return -ENOMEM;
	out->func_start = r->start;
	out->func_size = r->end - r->start;
	out->offset = elf_addr - r->start;
	out->by_range = true;
	note_module(sy, out->module, SYM_SRC_FDE);
	return 0;
}

int sym_inline_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
		      struct sym_info *out, int max, int *n)
{
	const struct sym_line *ln;
	const char *module;
	struct sym_table *t;
	int err, k;

	*n = 0;
	if (!mod->elf)
		return 0;
	if ((err = table_get(mod, root, &t)))
		return err;
	if (!table_dwarf(t, mod))
		return 0; /* no DWARF, no chain: and no cache entry per pc */
	if ((err = table_line(t, mod, elf_addr, &ln)))
		return err;
	if (!ln->ninl)
		return 0;
	if (!(module = strpool_cstr(&sy->pool, mod->name ? mod->name : "[unknown]")))
		return -ENOMEM;
	for (k = 0; k < ln->ninl && k < max; k++) {
		const char *file = k ? ln->inl[k - 1].call_file : ln->file;

		memset(&out[k], 0, sizeof(out[k]));
		out[k].module = module;
		out[k].inlined = true;
		out[k].line = k ? ln->inl[k - 1].call_line : ln->line;
		if (!(out[k].func = strpool_cstr(&sy->pool, ln->inl[k].func)) ||
		    (file && !(out[k].file = strpool_cstr(&sy->pool, file))))
			return -ENOMEM;
	}
	*n = k;
	note_module(sy, module, SYM_SRC_INLINE);
	return 0;
}

int sym_inline_user(struct sym *sy, struct space *s, uint64_t pc, struct sym_info *out, int max,
		    int *n)
{
	const struct mapping *m = space_find(s, pc);
	char root[64];

	*n = 0;
	if (!m || !m->mod || !m->mod->elf)
		return 0;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)s->pid);
	return sym_inline_module(sy, m->mod, s->pid > 0 ? root : "", pc - m->bias, out, max, n);
}

/* A pc with no module: name the mapping, and give a file offset. */
static int resolve_unmoduled(struct sym *sy, const struct mapping *m, uint64_t pc,
			     struct sym_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!m) {
		out->module = "[unknown]";
		out->offset = pc;
		return 0;
	}
	out->module = m->path ? strpool_cstr(&sy->pool, text_basename(m->path)) : "[unknown]";
	if (!out->module)
		return -ENOMEM;
	out->offset = pc - m->start + m->pgoff;
	note_module(sy, out->module, SYM_SRC_NONE);
	return 0;
}

int sym_resolve_user(struct sym *sy, struct space *s, uint64_t pc, bool want_line,
		     struct sym_info *out)
{
	const struct mapping *m = space_find(s, pc);
	char root[64];
	int err;

	if (!m || !m->mod || !m->mod->elf) {
		/* Anonymous executable memory is where JITs put code. */
		if ((!m || !m->path || m->path[0] == '[') && s->pid > 0 &&
		    sym_perfmap_lookup(sy, s->pid, pc, out) == 0)
			return 0;
		/* ... and without their perf map it has no names: say why. */
		if (m && !m->path && (m->prot & PROT_EXEC) && s->pid > 0 && sy->perfmap_missing)
			sy->jit_nomap_nspid = sy->perfmap_missing;
		return resolve_unmoduled(sy, m, pc, out);
	}
	snprintf(root, sizeof(root), "/proc/%d/root", (int)s->pid);
	err = sym_resolve_module(sy, m->mod, s->pid > 0 ? root : "", pc - m->bias, want_line, out);
	if (err)
		return err;
	if (out->func)
		out->func_start += m->bias;
	else
		out->offset = pc - m->start + m->pgoff;
	return 0;
}

/* Annotate's source text: the CU's file table has the full paths (with the
 * compile directory) that sym_info.file shortens to a basename. */
int sym_source_path_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
			   const char *base, char *buf, size_t size)
{
	struct sym_table *t;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nf;
	Dwarf *dw;

	if (!mod || !mod->elf || !base)
		return -ENOENT;
	if (table_get(mod, root, &t) || !(dw = table_dwarf(t, mod)))
		return -ENOENT;
	if (!find_cu(dw, elf_addr, &cu) || dwarf_getsrcfiles(&cu, &files, &nf) != 0)
		return -ENOENT;
	for (size_t i = 0; i < nf; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);
		Dwarf_Attribute at;
		const char *dir;

		if (!f || strcmp(text_basename(f), base) != 0)
			continue;
		/* A relative name is relative to the CU's compile directory. */
		dir = f[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
		if ((size_t)snprintf(buf, size, "%s%s%s", dir ? dir : "", dir ? "/" : "", f) < size)
			return 0;
	}
	return -ENOENT;
}

/* Annotate's source text: the CU's file table has the full paths (with the
 * compile directory) that sym_info.file shortens to a basename. */
int sym_source_path_user(struct sym *sy, struct space *s, uint64_t pc, const char *base, char *buf,
			 size_t size)
{
	const struct mapping *m = space_find(s, pc);
	char root[64];

	if (!m || !m->mod)
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)s->pid);
	return sym_source_path_module(sy, m->mod, s->pid > 0 ? root : "", pc - m->bias, base, buf,
				      size);
}

/* ---- perf maps --------------------------------------------------------- */

int sym_perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name)
{
	const char *p = line;
	char *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*start = strtoull(p, &end, 16);
	if (errno || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	*size = strtoull(p, &end, 16);
	if (errno || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n' || *p == '\r')
		return -EINVAL;
	*name = p;
	return 0;
}

static int pm_cmp(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The file's bytes, at most TFILE_PERFMAP_MAX of them, up to its last
 * newline (a JIT may be writing a line right now), NUL-terminated. */
static int perfmap_slurp(int fd, char **out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, *nl;

	for (;;) {
		ssize_t r;

		if (len >= TFILE_PERFMAP_MAX) {
			free(buf);
			tfile_count(TFILE_R_TOO_BIG);
			return -EFBIG;
		}
		if (array_grow((void **)&buf, &cap, len + 65536 + 1, 1)) {
			free(buf);
			return -ENOMEM;
		}
		r = pread(fd, buf + len, cap - len - 1, (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	nl = len ? memrchr(buf, '\n', len) : NULL;
	len = nl ? (size_t)(nl - buf) + 1 : 0;
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* Parse a whole perf map from an open fd into pm. Bad lines are skipped. */
static int perfmap_read(struct perfmap *pm, int fd)
{
	char *text = NULL, *line, *next, *names = NULL;
	size_t ncap = 0, nlen = 0, ecap = 0;
	struct pm_ent *ents = NULL;
	uint32_t seq = 0;
	int err;

	err = perfmap_slurp(fd, &text);
	if (err)
		return err;
	for (line = text; *line; line = next) {
		uint64_t start, size;
		const char *name;
		size_t len = strcspn(line, "\n");
		uint32_t off;

		next = line + len + (line[len] == '\n');
		line[len] = '\0';
		while (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		seq++;
		if (sym_perfmap_parse_line(line, &start, &size, &name) || !size ||
		    start + size < start)
			continue;
		if (array_grow((void **)&ents, &ecap, pm->n + 1, sizeof(*ents))) {
			err = -ENOMEM;
			break;
		}
		err = names_push(&names, &nlen, &ncap, name, &off);
		if (err)
			break;
		ents[pm->n++] = (struct pm_ent){start, start + size, off, seq};
	}
	free(text);
	if (err) {
		free(ents);
		free(names);
		pm->n = 0;
		return err;
	}
	if (pm->n)
		qsort(ents, pm->n, sizeof(*ents), pm_cmp);
	pm->ents = ents;
	pm->names = names;
	pm->loaded = true;
	return 0;
}

/* NSpid (last value) and effective uid of a live process. */
static int proc_status_ids(pid_t pid, pid_t *nspid, uid_t *uid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool got_ns = false, got_uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;
			long v;

			for (;;) {
				v = strtol(p, &end, 10);
				if (end == p)
					break;
				*nspid = (pid_t)v;
				got_ns = true;
				p = end;
			}
		} else if (!strncmp(line, "Uid:", 4)) {
			unsigned r, e;

			if (sscanf(line + 4, "%u %u", &r, &e) == 2) {
				*uid = e;
				got_uid = true;
			}
		}
	}
	free(line);
	fclose(f);
	if (!got_ns)
		*nspid = pid; /* kernels before 4.1 have no NSpid */
	return got_uid ? 0 : -EINVAL;
}

/* Re-check the file (at most once a second) and re-read it if changed. */
static void perfmap_refresh(struct perfmap *pm)
{
	char rel[64];
	struct stat st;
	uint64_t now = mono_ns();
	int fd;

	if (pm->checked_ns && now - pm->checked_ns < PERFMAP_RECHECK_NS)
		return;
	pm->checked_ns = now;
	if (pm->from_proc && proc_status_ids(pm->pid, &pm->nspid, &pm->uid)) {
		perfmap_clear(pm);
		return;
	}
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", (int)pm->nspid);
	fd = open_under(pm->root, rel, TFILE_NOFOLLOW, TFILE_PERFMAP_MAX, &st);
	if (fd < 0) {
		perfmap_clear(pm);
		return;
	}
	if (st.st_uid != 0 && st.st_uid != pm->uid) {
		close(fd);
		perfmap_clear(pm);
		return;
	}
	if (pm->loaded && st.st_dev == pm->dev && st.st_ino == pm->ino && st.st_size == pm->size &&
	    st.st_mtim.tv_sec == pm->mtime.tv_sec && st.st_mtim.tv_nsec == pm->mtime.tv_nsec) {
		close(fd);
		return;
	}
	perfmap_clear(pm);
	if (perfmap_read(pm, fd) == 0) {
		pm->dev = st.st_dev;
		pm->ino = st.st_ino;
		pm->size = st.st_size;
		pm->mtime = st.st_mtim;
	}
	close(fd);
}

static struct perfmap *perfmap_get(struct sym *sy, const char *root, pid_t pid)
{
	struct perfmap *pm;

	for (pm = sy->perfmaps; pm; pm = pm->next) {
		if (pm->pid == pid && !strcmp(pm->root, root))
			return pm;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->root = strdup(root);
	if (!pm->root) {
		free(pm);
		return NULL;
	}
	pm->pid = pid;
	pm->next = sy->perfmaps;
	sy->perfmaps = pm;
	return pm;
}

static int perfmap_find(struct sym *sy, struct perfmap *pm, uint64_t pc, struct sym_info *out)
{
	char buf[SYM_DEM_MAX];
	const struct pm_ent *best = NULL;
	size_t lo = STARTS_AT_OR_BELOW(pm->ents, pm->n, pc);
	long i;

	for (i = (long)lo - 1; i >= 0 && (long)lo - i <= 16; i--) {
		const struct pm_ent *e = &pm->ents[i];

		if (pc < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->func = strpool_cstr(&sy->pool, sym_demangle(pm->names + best->name, buf, sizeof(buf)));
	if (!out->func)
		return -ENOMEM;
	out->module = "[jit]";
	out->offset = pc - best->start;
	out->func_start = best->start;
	out->func_size = best->end - best->start;
	out->jit = true;
	note_module(sy, out->module, SYM_SRC_PERFMAP);
	return 0;
}

int sym_perfmap_lookup_at(struct sym *sy, const char *root, pid_t nspid, uid_t uid, uint64_t pc,
			  struct sym_info *out)
{
	struct perfmap *pm = perfmap_get(sy, root ? root : "", nspid);

	if (!pm)
		return -ENOMEM;
	pm->nspid = nspid;
	pm->uid = uid;
	perfmap_refresh(pm);
	return perfmap_find(sy, pm, pc, out);
}

int sym_perfmap_lookup(struct sym *sy, pid_t pid, uint64_t pc, struct sym_info *out)
{
	char root[64];
	struct perfmap *pm;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	pm = perfmap_get(sy, root, pid);
	if (!pm)
		return -ENOMEM;
	pm->from_proc = true;
	perfmap_refresh(pm);
	sy->perfmap_missing = pm->loaded ? 0 : (pm->nspid ? pm->nspid : pid);
	if (pm->loaded && sy->jit_nomap_nspid == pm->nspid)
		sy->jit_nomap_nspid = 0; /* the map came: the hint is done */
	return perfmap_find(sy, pm, pc, out);
}

pid_t sym_jit_nomap(const struct sym *sy)
{
	return sy->jit_nomap_nspid;
}

/* ---- kernel ------------------------------------------------------------ */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void ksyms_reset(struct sym *sy)
{
	free(sy->ksyms);
	free(sy->knames);
	sy->ksyms = NULL;
	sy->knames = NULL;
	sy->nksyms = 0;
}

/* Add one "ADDR TYPE NAME [module]" line; only text symbols are kept. */
static int ksym_add_line(struct sym *sy, char *line, size_t *cap, size_t *nlen, size_t *ncap,
			 bool *nonzero)
{
	char *end, *name, type;
	uint64_t addr;
	uint32_t off;
	int err;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || (*end != ' ' && *end != '\t'))
		return 0;
	while (*end == ' ' || *end == '\t')
		end++;
	if (!*end) /* "ADDR " and nothing after: no type to step over */
		return 0;
	type = *end++;
	if (*end != ' ' && *end != '\t')
		return 0;
	if (addr)
		*nonzero = true;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	while (*end == ' ' || *end == '\t')
		end++;
	name = end;
	name[strcspn(name, " \t\r\n")] = '\0';
	if (!*name)
		return 0;
	if (array_grow((void **)&sy->ksyms, cap, sy->nksyms + 1, sizeof(*sy->ksyms)))
		return -ENOMEM;
	err = names_push(&sy->knames, nlen, ncap, name, &off);
	if (err)
		return err;
	sy->ksyms[sy->nksyms++] = (struct ksym){addr, 0, off};
	return 0;
}

/* Sort, drop duplicates, and end each symbol at the next one. */
static void ksyms_finish(struct sym *sy, bool nonzero)
{
	size_t i, j = 0;

	sy->ksyms_loaded = true;
	sy->ksyms_zero = !nonzero;
	if (!nonzero) {
		ksyms_reset(sy);
		return;
	}
	if (sy->nksyms)
		qsort(sy->ksyms, sy->nksyms, sizeof(*sy->ksyms), ksym_cmp);
	for (i = 0; i < sy->nksyms; i++) {
		if (j && sy->ksyms[j - 1].start == sy->ksyms[i].start)
			continue;
		sy->ksyms[j++] = sy->ksyms[i];
	}
	sy->nksyms = j;
	for (i = 0; i < j; i++)
		sy->ksyms[i].end =
		    i + 1 < j ? sy->ksyms[i + 1].start : sy->ksyms[i].start + KSYM_LAST_SPAN;
}

int sym_kallsyms_parse(struct sym *sy, const char *text)
{
	size_t cap = 0, nlen = 0, ncap = 0;
	bool nonzero = false;
	const char *p = text;
	int err = 0;

	ksyms_reset(sy);
	while (*p && !err) {
		size_t len = strcspn(p, "\n");
		char *line = strndup(p, len);

		if (!line) {
			err = -ENOMEM;
			break;
		}
		err = ksym_add_line(sy, line, &cap, &nlen, &ncap, &nonzero);
		free(line);
		p += len;
		if (*p)
			p++;
	}
	if (err) {
		ksyms_reset(sy);
		return err;
	}
	ksyms_finish(sy, nonzero);
	return 0;
}

static int ksyms_load(struct sym *sy)
{
	size_t cap = 0, nlen = 0, ncap = 0, lcap = 0;
	bool nonzero = false;
	char *line = NULL;
	FILE *f = fopen("/proc/kallsyms", "re");
	int err = 0;

	if (!f) {
		/* No kallsyms: behave as without permission. */
		ksyms_finish(sy, false);
		return 0;
	}
	while (!err && getline(&line, &lcap, f) > 0)
		err = ksym_add_line(sy, line, &cap, &nlen, &ncap, &nonzero);
	free(line);
	fclose(f);
	if (err) {
		ksyms_reset(sy);
		return err;
	}
	ksyms_finish(sy, nonzero);
	return 0;
}

int sym_resolve_kernel(struct sym *sy, uint64_t pc, struct sym_info *out)
{
	size_t lo;
	int err;

	if (!sy->ksyms_loaded && (err = ksyms_load(sy)))
		return err;
	memset(out, 0, sizeof(*out));
	out->module = "[kernel]";
	out->kernel = true;
	out->offset = pc;
	lo = STARTS_AT_OR_BELOW(sy->ksyms, sy->nksyms, pc);
	if (lo == 0 || pc >= sy->ksyms[lo - 1].end)
		return 0;
	out->func = strpool_cstr(&sy->pool, sy->knames + sy->ksyms[lo - 1].name);
	if (!out->func)
		return -ENOMEM;
	out->offset = pc - sy->ksyms[lo - 1].start;
	out->func_start = sy->ksyms[lo - 1].start;
	out->func_size = sy->ksyms[lo - 1].end - sy->ksyms[lo - 1].start;
	return 0;
}
