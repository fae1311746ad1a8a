/*
 * sym — addresses to names: function, module, file:line; kernel and JIT.
 *
 * What it owns:
 *  - A per-module function table (struct sym_table), hung on
 *    mod->ext[SPACE_EXT_SYM] with its destructor, so it is built once per
 *    ELF file however many processes or struct sym map it, and dies with the
 *    module. Built from .symtab, else from a separate debug file's .symtab
 *    (debugfile: build-id, then .gnu_debuglink), else .dynsym. Entries are
 *    sorted by start, aliases collapsed (sized over size 0, global > weak >
 *    local, fewer leading underscores, longer name, then strcmp, so the
 *    choice does not depend on symbol order), and each has an end: start +
 *    size, or for a size-0 symbol the next symbol (bounded by its section).
 *    Lookup is a binary search. The table also owns the debug file and the
 *    module's srcline (libdw handle, file:line and inline chain per ELF
 *    address, cached).
 *  - Per table, built on first need, the function ranges of the module's
 *    .eh_frame and .debug_frame (elf/fde.c; one FDE per function, kept even
 *    by strip): a pc no symbol covers is named by the FDE holding it,
 *    "module!0xOFF" (the FDE's start as a file offset, as unnamed addresses
 *    are shown), so a stripped function's pcs are one function; and a
 *    size-0 symbol (whose end is only a guess) does not reach into a later
 *    FDE's function.
 *  - Names stay offsets into the symbols' string section (borrowed from
 *    the ELF, which outlives the table) until a pc asks for one; the
 *    shown name (demangled, cut to SYM_NAME_MAX) is then made once. A
 *    build that runs out of memory leaves an empty table, remembered.
 *  - Per struct sym: a pool of kernel names and the notes' module names
 *    (bounded), the user names of the last call (copies valid until the
 *    next call, even when the module they came from is gone; the caller
 *    copies what it keeps: sym.h), the kallsyms table (kallsyms.c), the perf map caches
 * (perfmap.c), and per module named the sources its names came from (sym_modules, for the help
 *    screen).
 *
 * Debug files are looked up under a root prefix: "/proc/PID/root" for a
 * live process (debugfile.h says how, and why through tfile). The root is
 * taken the first time a module is seen; later roots do not change a built
 * table. A debug file keeps no fd and no mapping: it is copied (elfimage)
 * and closed.
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
#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/elfsec.h"
#include "stacktop/elf/fde.h"
#include "stacktop/elf/gopclntab.h"
#include "stacktop/lib/array.h"
#include "stacktop/lib/pump.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/lib/text.h"
#include "stacktop/symbols/dbgfetch.h"
#include "stacktop/symbols/debugfile.h"
#include "stacktop/symbols/kallsyms.h"
#include "stacktop/symbols/jitdump.h"
#include "stacktop/symbols/perfmap.h"
#include "stacktop/symbols/srcline.h"
#include "stacktop/symbols/sym.h"

#include <ctype.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Nested or overlapping symbols: how far back a lookup walks. */
#define SYM_WALK_BACK 4

/* ---- state ------------------------------------------------------------- */

struct sym {
	struct strpool pool;   /* kernel names and the notes' module names: bounded */
	struct strpool recent; /* user names of the last call (valid until the next) */
	struct kallsyms *ksyms;
	struct perfmap_cache *perfmaps;
	struct jitdump_cache *jitdumps;
	/* debuginfod: the fetcher (NULL: off), modules waiting for a file */
	struct dbgfetch *fetch;
	struct sym_wait *waiting;
	unsigned names_gen;
	struct sym_module_note *notes; /* modules named so far */
	size_t nnotes, notes_cap;
	char jit_name[SYM_NAME_MAX]; /* the last perf-map name (valid until the next call) */
};

struct sym_wait {
	struct sym_wait *next;
	struct module *mod; /* referenced */
};

/* ---- per-module table -------------------------------------------------- */

struct sym_fn {
	uint64_t start, end;
	uint32_t name; /* offset in the table's string section (st_name) */
	uint8_t rank;  /* for alias choice: 2 global, 1 weak, 0 local */
	bool sized;    /* end is start + st_size, not guessed from the next symbol */
};

struct sym_table {
	struct sym_fn *fns;
	size_t n;
	/* The symbols' string section, borrowed from the ELF they came from
	 * (mod->elf, or dbg_elf which the table owns): both outlive the
	 * table. Names are offsets into it, never copies: 6,000 symbols may
	 * name one 1 MiB string. */
	const char *strs;
	size_t strs_len;
	char **dem;	  /* lazily made shown names; in strs when shown as they are */
	bool failed;	  /* the build ran out of memory: kept empty, not retried per pc */
	char *root;	  /* where debug files are looked for */
	bool symtab;	  /* from a .symtab (the module's or a debug file's) */
	bool fetch_asked; /* handed to debuginfod */
	bool dbg_tried;
	Elf *dbg_elf; /* holds no fd */
	bool src_tried;
	struct srcline *src; /* DWARF lines and inline chains */
	unsigned source;     /* SYM_SRC_SYMTAB, _DEBUG or _DYNSYM, or 0: no symbols */
	bool fde_tried;
	struct fde_range *fdes; /* function ranges from .eh_frame/.debug_frame */
	size_t nfde;
	bool go_ok;	     /* no .symtab, but Go's table: it names the module */
	struct gopclntab go; /* borrows mod->elf's bytes (the module outlives the table) */
};

/* ---- debug files ------------------------------------------------------- */

/* The separate debug file, found once; NULL when there is none. */
static Elf *table_debug_elf(struct sym_table *t, const struct module *mod)
{
	if (t->dbg_tried)
		return t->dbg_elf;
	t->dbg_tried = true;
	t->dbg_elf = debugfile_find(mod, t->root);
	return t->dbg_elf;
}

/* ---- building the function table --------------------------------------- */

/* The raw name at offset name of the string section: at most
 * SYM_DEMANGLE_MAX - 1 bytes of it are looked at (*len); *cut when it goes
 * on past them. */
static const char *fn_raw(const struct sym_table *t, uint32_t name, size_t *len, bool *cut)
{
	const char *p = t->strs + name;
	size_t room = t->strs_len - name;

	if (room > SYM_DEMANGLE_MAX - 1)
		room = SYM_DEMANGLE_MAX - 1;
	*len = strnlen(p, room);
	*cut = *len == room;
	return p;
}

/* The string section a symbol section links to: 0, or -ENOENT. */
static int table_strings(struct sym_table *t, Elf *elf, const GElf_Shdr *symsh)
{
	Elf_Scn *scn = elf_getscn(elf, symsh->sh_link);
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
		return -ENOENT;
	t->strs = d->d_buf;
	t->strs_len = d->d_size;
	return 0;
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
	Elf_Scn *scn = elfsec_find_type(elf, type, &sh);
	Elf_Data *d;
	size_t i, count;

	if (!scn || sh.sh_type == SHT_NOBITS || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)) ||
	    table_strings(t, elf, &sh))
		return -ENOENT;
	count = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < count; i++) {
		GElf_Sym s;
		struct sym_fn *f;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    !gelf_getshdr(elf_getscn(elf, s.st_shndx), &sec) || !want_symbol(&s, &sec))
			continue;
		if (s.st_name == 0 || s.st_name >= t->strs_len || !t->strs[s.st_name])
			continue;
		if (array_grow((void **)&t->fns, cap, t->n + 1, sizeof(*t->fns)))
			return -ENOMEM;
		f = &t->fns[t->n];
		f->name = s.st_name;
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
	bool xcut, ycut;
	int c;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if ((xs != 0) != (ys != 0))
		return xs ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	/* Names are compared as far as they are shown (capped: a hostile
	 * file's aliases cost at most SYM_DEMANGLE_MAX bytes a comparison). */
	xn = fn_raw(cmp_table, x->name, &xl, &xcut);
	yn = fn_raw(cmp_table, y->name, &yl, &ycut);
	/* As perf does: fewer leading underscores (printf over _IO_printf,
	 * malloc over __libc_malloc), then the longer name. */
	for (xu = 0; xu < xl && xn[xu] == '_'; xu++)
		;
	for (yu = 0; yu < yl && yn[yu] == '_'; yu++)
		;
	if (xu != yu)
		return xu < yu ? -1 : 1;
	if (xl != yl)
		return xl > yl ? -1 : 1;
	if ((c = memcmp(xn, yn, xl)))
		return c;
	return x->name < y->name ? -1 : x->name > y->name;
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

static void table_free(void *p)
{
	struct sym_table *t = p;
	size_t i;

	if (!t)
		return;
	for (i = 0; t->dem && i < t->n; i++) {
		if (t->dem[i] && t->dem[i] != t->strs + t->fns[i].name)
			free(t->dem[i]);
	}
	srcline_free(t->src);
	free(t->fdes);
	elfimage_close(t->dbg_elf);
	ARRAY_FREE_ALL(t->dem, t->fns, t->root, t);
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
		elfimage_close(fetched);
		return -ENOMEM;
	}
	pump(); /* reading a symbol table takes a while: let the rings be read */
	if (fetched) {
		t->dbg_tried = true;
		t->dbg_elf = fetched;
		t->fetch_asked = true;
	}
	t->symtab = true;
	if (elfsec_has_symtab(mod->elf)) {
		err = table_add_symbols(t, mod->elf, SHT_SYMTAB, &cap);
		t->source = SYM_SRC_SYMTAB;
	} else if ((dbg = table_debug_elf(t, mod)) && elfsec_has_symtab(dbg)) {
		err = table_add_symbols(t, dbg, SHT_SYMTAB, &cap);
		t->source = SYM_SRC_DEBUG;
	} else {
		t->symtab = false;
		err = table_add_symbols(t, mod->elf, SHT_DYNSYM, &cap);
		t->source = SYM_SRC_DYNSYM;
	}
	pump();
	/* A Go binary stripped of .symtab still has Go's own table: better
	 * than its .dynsym (a cgo binary's few imports) or none. */
	if (!t->symtab && gopclntab_read(mod->elf, &t->go) == 0)
		t->go_ok = true;
	if (!err)
		table_finish(t);
	if (!err && t->n && !(t->dem = calloc(t->n, sizeof(*t->dem))))
		err = -ENOMEM;
	if (err && err != -ENOENT) {
		/* Remembered as an empty table: the module's pcs go unnamed
		 * (by FDE range) instead of rebuilding it for every new pc. */
		free(t->fns);
		t->fns = NULL;
		t->n = 0;
		t->failed = true;
	}
	if (!t->n)
		t->source = 0;
	if (t->go_ok)
		t->source = SYM_SRC_GOPCLNTAB;
	*out = t;
	return 0;
}

/* The module's table, built on first use. */
static int table_get(struct module *mod, const char *root, struct sym_table **out)
{
	int err;

	if (mod->ext[SPACE_EXT_SYM]) {
		*out = mod->ext[SPACE_EXT_SYM];
		return 0;
	}
	space_module_fill(mod); /* names are read on first use */
	err = table_build(mod, root, NULL, out);
	if (err)
		return err;
	mod->ext[SPACE_EXT_SYM] = *out;
	mod->ext_free[SPACE_EXT_SYM] = table_free;
	return 0;
}

/* Index of the function holding addr, or -1. */
static long table_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = ARRAY_STARTS_AT_OR_BELOW(t->fns, t->n, addr), k;
	long i;

	/* lo - 1 is the last start <= addr; a nested or overlapping symbol
	 * may end before addr while an earlier one still covers it. */
	for (k = 0, i = (long)lo - 1; i >= 0 && k < SYM_WALK_BACK; i--, k++) {
		if (addr < t->fns[i].end)
			return i;
	}
	return -1;
}

/* The name fns[i] is shown by (made once, kept in dem[i]): demangled,
 * without a symbol version, at most SYM_NAME_MAX bytes with the NUL (cut
 * with SYM_NAME_CUT). A short plain name is shown from the string section
 * itself; NULL only on ENOMEM. */
static const char *table_name(struct sym_table *t, long i)
{
	char raw[SYM_DEMANGLE_MAX], buf[SYM_DEMANGLE_MAX];
	const char *p, *d;
	size_t len;
	bool cut;

	if (t->dem[i])
		return t->dem[i];
	p = fn_raw(t, t->fns[i].name, &len, &cut);
	if (!cut && len < SYM_NAME_MAX && !memchr(p, '@', len) &&
	    !(p[0] == '_' && (p[1] == 'Z' || p[1] == 'R')))
		return t->dem[i] = (char *)p; /* shown as it is, NUL-terminated in strs */
	memcpy(raw, p, len);
	raw[len] = '\0';
	/* A name cut short does not demangle: shown raw, with the mark. */
	d = cut ? raw : symname_demangle(raw, buf, sizeof(buf));
	/* "clock_gettime@@GLIBC_2.17": the symbol version is noise on screen. */
	if (d == raw && raw[0] != '@' && strchr(raw, '@'))
		raw[strcspn(raw, "@")] = '\0';
	symname_clip(d == raw ? raw : buf, cut);
	t->dem[i] = strdup(d == raw ? raw : buf);
	return t->dem[i];
}

/* ---- function ranges (FDEs) -------------------------------------------- */

/* The FDE range holding addr, or NULL; the table of ranges is built from
 * the module's own .eh_frame and .debug_frame on first use (none when it
 * cannot be: a name by range is a nicety). */
static const struct fde_range *table_fde(struct sym_table *t, const struct module *mod,
					 uint64_t addr)
{
	if (!t->fde_tried) {
		t->fde_tried = true;
		fde_read(mod->elf, &t->fdes, &t->nfde);
		pump();
	}
	return fde_find(t->fdes, t->nfde, addr);
}

/* ---- lines ------------------------------------------------------------- */

/* srcline's view of the symbol table: the range of the symbol holding
 * addr. */
static bool table_fn_range(void *ctx, uint64_t addr, uint64_t *start, uint64_t *end)
{
	const struct sym_table *t = ctx;
	long f = table_find(t, addr);

	if (f < 0)
		return false;
	*start = t->fns[f].start;
	*end = t->fns[f].end;
	return true;
}

/* A debug file's sections are often compressed, and dwarf_begin_elf
 * inflates them all in one go (hundreds of ms for libc's on a loaded
 * machine): inflate them here one at a time, the rings read in between,
 * each one's compressed bytes given back as it is done.
 * A section that fails stays compressed: libdw then tries, and fails, the
 * same way. */
static void inflate_sections(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	pump();
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		elfimage_inflate(e, scn);
		pump();
	}
}

/* The module's DWARF lines (from the file itself, else its debug file),
 * made on first use; NULL only when out of memory. */
static struct srcline *table_srcline(struct sym_table *t, const struct module *mod)
{
	Dwarf *dw = NULL;
	Elf *e = NULL;

	if (t->src_tried)
		return t->src;
	if (mod->elf && elfsec_has_dwarf(mod->elf))
		e = mod->elf;
	else if (mod->elf)
		e = table_debug_elf(t, mod);
	if (e)
		inflate_sections(e);
	if (e)
		dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	pump();
	if (srcline_new(dw, table_fn_range, t, &t->src) == 0)
		t->src_tried = true;
	return t->src;
}

/* file:line (and inline chain) of an ELF address, cached per table. */
static int table_line(struct sym_table *t, const struct module *mod, uint64_t addr,
		      const struct srcline_loc **out)
{
	struct srcline *sl = table_srcline(t, mod);

	return sl ? srcline_lookup(sl, addr, out) : -ENOMEM;
}

/* ---- user space -------------------------------------------------------- */

int sym_new(struct sym **out)
{
	struct sym *sy = calloc(1, sizeof(*sy));

	if (!sy)
		return -ENOMEM;
	if (kallsyms_new(&sy->ksyms) || perfmap_cache_new(&sy->perfmaps) ||
	    jitdump_cache_new(&sy->jitdumps)) {
		sym_free(sy);
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	*out = sy;
	return 0;
}

void sym_free(struct sym *sy)
{
	if (!sy)
		return;
	while (sy->waiting) {
		struct sym_wait *w = sy->waiting;

		sy->waiting = w->next;
		space_module_put(w->mod);
		free(w);
	}
	perfmap_cache_free(sy->perfmaps);
	jitdump_cache_free(sy->jitdumps);
	kallsyms_free(sy->ksyms);
	free(sy->notes);
	strpool_free(&sy->pool);
	strpool_free(&sy->recent);
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
		Elf *e;

		if (mod->build_id_len != len || memcmp(mod->build_id, id, len)) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		e = debugfile_open_checked(path, id, len);
		if (e && !elfsec_has_symtab(e)) {
			elfimage_close(e);
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

/* Remember that module name was named from sources. A short list
 * searched linearly: it is touched once per new pc, not per sample. Its
 * names are copies kept until sym_free, at most 4096 of them. */
static void note_module(struct sym *sy, const char *name, unsigned sources)
{
	size_t i;

	for (i = 0; i < sy->nnotes; i++) {
		if (strcmp(sy->notes[i].name, name) == 0) {
			sy->notes[i].sources |= sources;
			return;
		}
	}
	if (sy->nnotes >= 4096 || !(name = strpool_cstr(&sy->pool, name)) ||
	    array_grow((void **)&sy->notes, &sy->notes_cap, sy->nnotes + 1, sizeof(*sy->notes)))
		return; /* a note is for people: losing one is no error */
	sy->notes[sy->nnotes++] = (struct sym_module_note){name, sources};
}

/* A user name handed out: a copy valid until the next call into sym.
 * Names a target chooses (a library per dlopen, each with new functions)
 * are never kept here past that: frames holds what the window shows. */
static const char *recent(struct sym *sy, const char *s)
{
	return strpool_cstr(&sy->recent, s);
}

size_t sym_modules(const struct sym *sy, const struct sym_module_note **out)
{
	*out = sy->notes;
	return sy->nnotes;
}

static int name_by_fde(struct sym *sy, struct sym_table *t, const struct module *mod,
		       uint64_t elf_addr, struct sym_info *out);

/* A name from the target's file handed out: cut to SYM_NAME_MAX. */
static const char *recent_clipped(struct sym *sy, const char *name)
{
	char buf[SYM_NAME_MAX];
	size_t len = strnlen(name, SYM_NAME_MAX);

	memcpy(buf, name, len < SYM_NAME_MAX ? len + 1 : SYM_NAME_MAX);
	buf[SYM_NAME_MAX - 1] = '\0';
	symname_clip(buf, len >= SYM_NAME_MAX);
	return recent(sy, buf);
}

/* A Go module named by its .gopclntab: -ENOENT when no function holds
 * elf_addr (the caller goes on as without it). In inlined code the line
 * is the call of the outermost inlined level, as with DWARF. */
static int resolve_go(struct sym *sy, struct sym_table *t, uint64_t elf_addr, bool want_line,
		      struct sym_info *out)
{
	struct gopclntab_inl inl[SYM_INLINE_MAX];
	struct gopclntab_func f;
	const char *file = NULL;
	int line = 0, n = 0;

	if (gopclntab_find(&t->go, elf_addr, &f))
		return -ENOENT;
	if (!(out->func = recent_clipped(sy, f.name[0] ? f.name : "[go]")))
		return -ENOMEM;
	out->offset = elf_addr - f.entry;
	out->func_start = f.entry;
	out->func_size = f.end - f.entry;
	note_module(sy, out->module, SYM_SRC_GOPCLNTAB);
	if (!want_line)
		return 0;
	gopclntab_inline(&t->go, &f, elf_addr, inl, SYM_INLINE_MAX, &n, &file, &line);
	if (!n && gopclntab_line(&t->go, &f, elf_addr, &file, &line))
		return 0;
	if (file && !(out->file = recent_clipped(sy, text_basename(file))))
		return -ENOMEM;
	out->line = line;
	return 0;
}

/* Go's inline chain at elf_addr, as sym_inline_module gives DWARF's. */
static int inline_go(struct sym *sy, struct sym_table *t, const char *module, uint64_t elf_addr,
		     struct sym_info *out, int max, int *n)
{
	struct gopclntab_inl inl[SYM_INLINE_MAX];
	struct gopclntab_func f;
	const char *file;
	int line, k, got = 0;

	if (gopclntab_find(&t->go, elf_addr, &f))
		return 0;
	gopclntab_inline(&t->go, &f, elf_addr, inl, max < SYM_INLINE_MAX ? max : SYM_INLINE_MAX,
			 &got, &file, &line);
	for (k = 0; k < got; k++) {
		memset(&out[k], 0, sizeof(out[k]));
		out[k].module = module;
		out[k].inlined = true;
		out[k].line = inl[k].line;
		if (!(out[k].func = recent_clipped(sy, inl[k].func)) ||
		    (inl[k].file &&
		     !(out[k].file = recent_clipped(sy, text_basename(inl[k].file)))))
			return -ENOMEM;
	}
	*n = k;
	if (k)
		note_module(sy, module, SYM_SRC_GOPCLNTAB);
	return 0;
}

int sym_resolve_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
		       bool want_line, struct sym_info *out)
{
	struct sym_table *t;
	const struct srcline_loc *ln;
	long i;
	int err;

	memset(out, 0, sizeof(*out));
	strpool_free(&sy->recent); /* the last call's names */
	out->module = recent(sy, mod->name ? mod->name : "[unknown]");
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
	if (t->go_ok && (err = resolve_go(sy, t, elf_addr, want_line, out)) != -ENOENT)
		return err;
	i = table_find(t, elf_addr);
	if (i >= 0 && !t->fns[i].sized) {
		/* A size-0 symbol's end is a guess (the next symbol); an FDE
		 * starting after it says the pc is in another function. */
		const struct fde_range *r = table_fde(t, mod, elf_addr);

		if (r && r->start > t->fns[i].start)
			i = -1;
	}
	if (i >= 0) {
		const char *name = table_name(t, i);

		if (!name || !(out->func = recent(sy, name)))
			return -ENOMEM;
		out->offset = elf_addr - t->fns[i].start;
		out->func_start = t->fns[i].start;
		out->func_size = t->fns[i].end - t->fns[i].start;
		note_module(sy, out->module, t->source);
	} else if (elfsec_in_plt(mod->elf, elf_addr)) {
		/* A call through the PLT: no symbol covers the stubs; each is
		 * named by its relocation ("strlen@plt", as perf does), else
		 * the section says what it is. */
		char plt[256];
		out->func = "[plt]";
		if (elfsec_plt_name(mod->elf, elf_addr, plt, sizeof(plt)) == 0 &&
		    !(out->func = recent(sy, plt)))
			return -ENOMEM;
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
	if (file && !(out->file = recent(sy, file)))
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
	const struct fde_range *r = table_fde(t, mod, elf_addr);
	char buf[512];

	if (!r) {
		note_module(sy, out->module, SYM_SRC_NONE);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s!0x%" PRIx64, out->module,
		 elfsec_file_offset(mod->elf, r->start));
	if (!(out->func = recent(sy, buf)))
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
	const struct srcline_loc *ln;
	const char *module;
	struct srcline *sl;
	struct sym_table *t;
	int err, k;

	*n = 0;
	if (!mod->elf)
		return 0;
	if ((err = table_get(mod, root, &t)))
		return err;
	if (t->go_ok) {
		strpool_free(&sy->recent); /* the last call's names */
		if (!(module = recent(sy, mod->name ? mod->name : "[unknown]")))
			return -ENOMEM;
		return inline_go(sy, t, module, elf_addr, out, max, n);
	}
	if (!(sl = table_srcline(t, mod)) || !srcline_has_dwarf(sl))
		return 0; /* no DWARF, no chain: and no cache entry per pc */
	if ((err = srcline_lookup(sl, elf_addr, &ln)))
		return err;
	if (!ln->ninl)
		return 0;
	strpool_free(&sy->recent); /* the last call's names */
	if (!(module = recent(sy, mod->name ? mod->name : "[unknown]")))
		return -ENOMEM;
	for (k = 0; k < ln->ninl && k < max; k++) {
		const char *file = k ? ln->inl[k - 1].call_file : ln->file;

		memset(&out[k], 0, sizeof(out[k]));
		out[k].module = module;
		out[k].inlined = true;
		out[k].line = k ? ln->inl[k - 1].call_line : ln->line;
		if (!(out[k].func = recent(sy, ln->inl[k].func)) ||
		    (file && !(out[k].file = recent(sy, file))))
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

/* The path of the jitdump file s maps (a JIT maps it so perf finds it),
 * or NULL. */
static const char *jitdump_of(const struct space *s)
{
	for (size_t i = 0; i < s->nmaps; i++) {
		if (s->maps[i].path && jitdump_is_path(s->maps[i].path))
			return s->maps[i].path;
	}
	return NULL;
}

/* pc in the jitdump file at path: its name, and file:line from the JIT's
 * debug info (kept with the frame like the name: frames copies them). */
static int sym_jitdump_lookup(struct sym *sy, pid_t pid, const char *path, uint64_t pc,
			      struct sym_info *out)
{
	char buf[SYM_DEMANGLE_MAX];
	struct jitdump_sym js;
	int err = jitdump_lookup(sy->jitdumps, pid, path, pc, &js);

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	const char *d = symname_demangle(js.name, buf, sizeof(buf));

	snprintf(sy->jit_name, sizeof(sy->jit_name), "%s", d);
	symname_clip(sy->jit_name, strnlen(d, SYM_NAME_MAX) >= SYM_NAME_MAX);
	strpool_free(&sy->recent); /* the last call's names */
	out->func = sy->jit_name;
	out->module = "[jit]";
	out->offset = pc - js.start;
	out->func_start = js.start;
	out->func_size = js.end - js.start;
	out->jit = true;
	if (js.file && !(out->file = recent(sy, text_basename(js.file))))
		return -ENOMEM;
	out->line = js.line;
	note_module(sy, out->module, SYM_SRC_JITDUMP);
	return 0;
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
	strpool_free(&sy->recent); /* the last call's names */
	out->module = m->path ? recent(sy, text_basename(m->path)) : "[unknown]";
	if (!out->module)
		return -ENOMEM;
	out->offset = pc - m->start + m->pgoff;
	/* a file left unread (FUSE, network): the help says why */
	note_module(sy, out->module,
		    SYM_SRC_NONE | (m->mod && m->mod->remote ? SYM_SRC_REMOTE : 0));
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
		const char *dump = jitdump_of(s);

		if ((!m || !m->path || m->path[0] == '[') && s->pid > 0 &&
		    (sym_perfmap_lookup(sy, s->pid, pc, out) == 0 ||
		     (dump && sym_jitdump_lookup(sy, s->pid, dump, pc, out) == 0)))
			return 0;
		/* ... and without their perf map it has no names: say why. */
		if (m && !m->path && (m->prot & PROT_EXEC) && s->pid > 0 && !dump)
			perfmap_note_unnamed(sy->perfmaps);
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
	struct srcline *sl;

	if (!mod || !mod->elf || !base)
		return -ENOENT;
	if (table_get(mod, root, &t) || !(sl = table_srcline(t, mod)))
		return -ENOENT;
	return srcline_source_path(sl, elf_addr, base, buf, size);
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

/* A perf map's entry as a sym_info (the name demangled into jit_name). */
static void jit_info(struct sym *sy, const struct perfmap_sym *ps, uint64_t pc,
		     struct sym_info *out)
{
	char buf[SYM_DEMANGLE_MAX];

	memset(out, 0, sizeof(*out));
	/* Not kept: a JIT may rename its code every second. The caller
	 * copies it (frames holds it counted while a frame uses it). */
	const char *d = symname_demangle(ps->name, buf, sizeof(buf));

	snprintf(sy->jit_name, sizeof(sy->jit_name), "%s", d);
	symname_clip(sy->jit_name, strnlen(d, SYM_NAME_MAX) >= SYM_NAME_MAX);
	out->func = sy->jit_name;
	out->module = "[jit]";
	out->offset = pc - ps->start;
	out->func_start = ps->start;
	out->func_size = ps->end - ps->start;
	out->jit = true;
	note_module(sy, out->module, SYM_SRC_PERFMAP);
}

int sym_perfmap_lookup(struct sym *sy, pid_t pid, uint64_t pc, struct sym_info *out)
{
	struct perfmap_sym ps;
	int err = perfmap_lookup(sy->perfmaps, pid, pc, &ps);

	if (err)
		return err;
	jit_info(sy, &ps, pc, out);
	return 0;
}

int sym_perfmap_lookup_at(struct sym *sy, const char *root, pid_t nspid, uid_t uid, uint64_t pc,
			  struct sym_info *out)
{
	struct perfmap_sym ps;
	int err = perfmap_lookup_at(sy->perfmaps, root, nspid, uid, pc, &ps);

	if (err)
		return err;
	jit_info(sy, &ps, pc, out);
	return 0;
}

pid_t sym_jit_nomap(const struct sym *sy)
{
	return perfmap_jit_nomap(sy->perfmaps);
}

/* ---- kernel ------------------------------------------------------------ */

int sym_resolve_kernel(struct sym *sy, uint64_t pc, struct sym_info *out)
{
	struct kallsyms_sym ks;
	int err = kallsyms_lookup(sy->ksyms, pc, &ks);

	if (err && err != -ENOENT)
		return err;
	memset(out, 0, sizeof(*out));
	out->module = "[kernel]";
	out->kernel = true;
	out->offset = pc;
	if (err)
		return 0;
	out->func = strpool_cstr(&sy->pool, ks.name);
	if (!out->func)
		return -ENOMEM;
	out->offset = pc - ks.start;
	out->func_start = ks.start;
	out->func_size = ks.end - ks.start;
	return 0;
}
