/*
 * gopclntab — Go's function table read in place (see the header for what
 * and why).
 *
 * The layouts (runtime/symtab.go and cmd/link/internal/ld/pcln.go of each
 * release): a header (magic, two zero bytes, pc quantum, pointer size,
 * then pointer-sized words: nfunc, nfiles, [text start, 1.18+], and the
 * offsets of funcnametab, cutab, filetab, pctab and the function table),
 * then the tables. The function table is nfunc + 1 pairs (entry, offset
 * of the function's _func record from the table's start); 1.18+ pairs are
 * two uint32, the entry an offset from the text start; 1.16's are two
 * pointers. A _func record holds the name's offset in funcnametab, the
 * offsets in pctab of its pcsp, pcfile and pcln tables, its compile
 * unit's first slot in cutab (file numbers are per CU), then npcdata
 * uint32 pcdata table offsets and nfuncdata funcdata references.
 *
 * A pc→value table is a run of (value delta, pc delta) varint pairs: the
 * value starts at -1 at the entry, a value delta is zig-zag encoded, a pc
 * delta is in units of the quantum, a zero value delta after the first
 * pair ends the table.
 *
 * Every read goes through rd32/rdw/table_str, which check the bounds of
 * the bytes given (or of the one table a value must lie in); nothing is
 * trusted from one read to the next.
 */
#include "stacktop/elf/gopclntab.h"

#include <errno.h>
#include <string.h>

#define PCDATA_INLTREE 2   /* _PCDATA_InlTreeIndex */
#define FUNCDATA_INLTREE 3 /* _FUNCDATA_InlTree */

/* ---- bounded reads ------------------------------------------------------- */

static bool rd32(const uint8_t *p, size_t size, uint64_t off, uint32_t *v)
{
	if (off > size || size - off < 4)
		return false;
	memcpy(v, p + off, 4);
	return true;
}

static bool rdw(const uint8_t *p, size_t size, uint64_t off, unsigned ptrsize, uint64_t *v)
{
	uint32_t w;

	if (ptrsize == 4) {
		if (!rd32(p, size, off, &w))
			return false;
		*v = w;
		return true;
	}
	if (off > size || size - off < 8)
		return false;
	memcpy(v, p + off, 8);
	return true;
}

/* A NUL-terminated string at off of a table [base, base + len) of data:
 * NULL when off is outside it or the string does not end inside it. */
static const char *table_str(const uint8_t *data, uint64_t base, size_t len, int64_t off)
{
	const uint8_t *s;

	if (off < 0 || (uint64_t)off >= len)
		return NULL;
	s = data + base + off;
	return memchr(s, 0, len - (size_t)off) ? (const char *)s : NULL;
}

/* ---- header ------------------------------------------------------------ */

/* The length of the table at off: up to the next table's start (or the
 * end of the bytes); the order of the tables is not assumed. */
static size_t table_len(const uint64_t *offs, size_t n, uint64_t off, size_t size)
{
	uint64_t end = size;

	for (size_t i = 0; i < n; i++)
		if (offs[i] > off && offs[i] < end)
			end = offs[i];
	return (size_t)(end - off);
}

int gopclntab_parse(const uint8_t *data, size_t size, uint64_t text_hint, struct gopclntab *g)
{
	uint32_t magic;
	uint64_t w[8], offs[5];
	unsigned nw, k = 0, i;

	memset(g, 0, sizeof(*g));
	if (!data || !rd32(data, size, 0, &magic) || size < 8 || data[4] || data[5])
		return -ENOEXEC;
	if (magic == GOPCLNTAB_MAGIC_116)
		g->version = 116;
	else if (magic == GOPCLNTAB_MAGIC_118)
		g->version = 118;
	else if (magic == GOPCLNTAB_MAGIC_120)
		g->version = 120;
	else
		return -ENOEXEC;
	g->quantum = data[6];
	g->ptrsize = data[7];
	if ((g->quantum != 1 && g->quantum != 2 && g->quantum != 4) ||
	    (g->ptrsize != 4 && g->ptrsize != 8))
		return -ENOEXEC;
	nw = g->version == 116 ? 7 : 8;
	for (i = 0; i < nw; i++)
		if (!rdw(data, size, 8 + (uint64_t)i * g->ptrsize, g->ptrsize, &w[i]))
			return -ENOEXEC;
	g->nfunc = w[k++];
	k++; /* nfiles */
	if (g->version != 116)
		g->text = w[k++];
	if (!g->text)
		g->text = text_hint;
	for (i = 0; i < 5; i++) {
		offs[i] = w[k + i];
		if (offs[i] < 8 + (uint64_t)nw * g->ptrsize || offs[i] > size)
			return -ENOEXEC;
	}
	g->funcnames = offs[0];
	g->cutab = offs[1];
	g->filetab = offs[2];
	g->pctab = offs[3];
	g->functab = offs[4];
	g->funcnames_len = table_len(offs, 5, offs[0], size);
	g->cutab_len = table_len(offs, 5, offs[1], size);
	g->filetab_len = table_len(offs, 5, offs[2], size);
	g->pctab_len = table_len(offs, 5, offs[3], size);
	g->functab_len = size - offs[4]; /* the _func records follow it */
	/* nfunc + 1 entries must fit (without overflow). */
	size_t ent = g->version == 116 ? 2u * g->ptrsize : 8u;
	if (g->nfunc == 0 || g->nfunc >= g->functab_len / ent)
		return -ENOEXEC;
	g->data = data;
	g->size = size;
	return 0;
}

void gopclntab_set_region(struct gopclntab *g, const uint8_t *region, size_t region_size,
			  uint64_t region_addr, uint64_t gofunc)
{
	g->region = region;
	g->region_size = region_size;
	g->region_addr = region_addr;
	g->gofunc = gofunc;
}

/* ---- the function table -------------------------------------------------- */

/* Entry i of the function table: its pc and its record's offset. */
static bool ftab_entry(const struct gopclntab *g, uint64_t i, uint64_t *pc, uint64_t *funcoff)
{
	uint32_t a, b;

	if (g->version == 116) {
		uint64_t off = g->functab + i * 2 * g->ptrsize;
		return rdw(g->data, g->size, off, g->ptrsize, pc) &&
		       rdw(g->data, g->size, off + g->ptrsize, g->ptrsize, funcoff);
	}
	if (!rd32(g->data, g->size, g->functab + i * 8, &a) ||
	    !rd32(g->data, g->size, g->functab + i * 8 + 4, &b))
		return false;
	*pc = g->text + a;
	*funcoff = b;
	return true;
}

/* Offsets of a _func record's fields past the entry. */
static unsigned fld_name(const struct gopclntab *g)
{
	return g->version == 116 ? g->ptrsize : 4;
}
#define FLD_PCSP(g) (fld_name(g) + 12)
#define FLD_PCFILE(g) (fld_name(g) + 16)
#define FLD_PCLN(g) (fld_name(g) + 20)
#define FLD_NPCDATA(g) (fld_name(g) + 24)
#define FLD_CUOFF(g) (fld_name(g) + 28)
/* funcID, flag, pad, nfuncdata; pcdata after them */
static unsigned fld_funcid(const struct gopclntab *g)
{
	return fld_name(g) + (g->version == 120 ? 36 : 32);
}

static bool func_u32(const struct gopclntab *g, const struct gopclntab_func *f, unsigned fld,
		     uint32_t *v)
{
	return rd32(g->data, g->size, f->off + fld, v);
}

int gopclntab_nth(const struct gopclntab *g, uint64_t i, struct gopclntab_func *f)
{
	uint64_t epc, eoff, npc, noff;
	uint32_t nameoff;

	if (!g->data || i >= g->nfunc || !ftab_entry(g, i, &epc, &eoff) ||
	    !ftab_entry(g, i + 1, &npc, &noff) || npc <= epc)
		return -ENOENT;
	if (eoff > g->size - g->functab)
		return -ENOENT;
	f->entry = epc;
	f->end = npc;
	f->off = g->functab + eoff;
	/* The record must hold its fixed part. */
	if (g->size - f->off < fld_funcid(g) + 4)
		return -ENOENT;
	f->name = "";
	if (func_u32(g, f, fld_name(g), &nameoff)) {
		const char *s =
		    table_str(g->data, g->funcnames, g->funcnames_len, (int64_t)(int32_t)nameoff);
		if (s)
			f->name = s;
	}
	return 0;
}

int gopclntab_find(const struct gopclntab *g, uint64_t pc, struct gopclntab_func *f)
{
	uint64_t lo = 0, hi = g->nfunc, epc, eoff;

	if (!g->data)
		return -ENOENT;
	/* The last entry at or below pc (lo - 1 after the loop). */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (!ftab_entry(g, mid, &epc, &eoff))
			return -ENOENT;
		if (epc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || gopclntab_nth(g, lo - 1, f) || pc < f->entry || pc >= f->end)
		return -ENOENT;
	return 0;
}

/* ---- pc→value tables ------------------------------------------------------ */

static bool uvarint(const uint8_t *p, size_t end, size_t *pos, uint32_t *v)
{
	uint32_t r = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*pos >= end)
			return false;
		b = p[(*pos)++];
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/* The value of the table at pctab offset tab for pc in f. */
static bool pcvalue(const struct gopclntab *g, const struct gopclntab_func *f, uint32_t tab,
		    uint64_t pc, int32_t *val)
{
	const uint8_t *p = g->data + g->pctab;
	size_t end = g->pctab_len, pos = tab;
	uint64_t at = f->entry;
	int32_t v = -1;
	bool first = true;

	if (tab == 0 || tab >= end || pc < f->entry || pc >= f->end)
		return false;
	/* Each pair takes at least two bytes: the walk ends within the table. */
	for (;;) {
		uint32_t uv, pcd;

		if (!uvarint(p, end, &pos, &uv) || (uv == 0 && !first))
			return false;
		first = false;
		v += (int32_t)((uv & 1) ? ~(uv >> 1) : (uv >> 1));
		if (!uvarint(p, end, &pos, &pcd))
			return false;
		at += (uint64_t)pcd * g->quantum;
		if (pc < at) {
			*val = v;
			return true;
		}
		if (at >= f->end)
			return false;
	}
}

int gopclntab_sp_delta(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t pc,
		       int32_t *delta)
{
	uint32_t tab;
	int32_t v;

	if (!func_u32(g, f, FLD_PCSP(g), &tab) || !pcvalue(g, f, tab, pc, &v) || v < 0)
		return -ENOENT;
	*delta = v;
	return 0;
}

/* The name of file number fileno of f's compile unit. */
static const char *file_name(const struct gopclntab *g, const struct gopclntab_func *f,
			     int32_t fileno)
{
	uint32_t cu, off;

	if (fileno < 0 || !func_u32(g, f, FLD_CUOFF(g), &cu))
		return NULL;
	uint64_t slot = ((uint64_t)cu + (uint64_t)fileno) * 4;
	if (slot >= g->cutab_len || !rd32(g->data + g->cutab, g->cutab_len, slot, &off) ||
	    off == UINT32_MAX)
		return NULL;
	return table_str(g->data, g->filetab, g->filetab_len, off);
}

int gopclntab_line(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t pc,
		   const char **file, int *line)
{
	uint32_t ftab, ltab;
	int32_t fno, ln;

	if (!func_u32(g, f, FLD_PCFILE(g), &ftab) || !func_u32(g, f, FLD_PCLN(g), &ltab) ||
	    !pcvalue(g, f, ltab, pc, &ln) || ln < 0)
		return -ENOENT;
	*line = ln;
	*file = pcvalue(g, f, ftab, pc, &fno) ? file_name(g, f, fno) : NULL;
	return 0;
}

/* ---- inline tree ------------------------------------------------------------ */

/* pcdata table i of f (its pctab offset), or 0. */
static uint32_t pcdata(const struct gopclntab *g, const struct gopclntab_func *f, unsigned i)
{
	uint32_t n = 0, tab = 0;

	if (!func_u32(g, f, FLD_NPCDATA(g), &n) || i >= n ||
	    !rd32(g->data, g->size, f->off + fld_funcid(g) + 4 + 4ull * i, &tab))
		return 0;
	return tab;
}

/* Where f's inline tree is in the region (its offset), or false. */
static bool inltree(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t *at)
{
	uint32_t npc = 0, raw;
	uint64_t addr, nfd;
	uint64_t base = f->off + fld_funcid(g) + 4;

	if (!g->region || !func_u32(g, f, FLD_NPCDATA(g), &npc))
		return false;
	nfd = g->data[f->off + fld_funcid(g) + 3];
	if (nfd <= FUNCDATA_INLTREE)
		return false;
	base += 4ull * npc;
	if (g->version == 116) {
		/* pointers, aligned (the table is pointer-aligned in the file) */
		if (g->ptrsize == 8 && (base & 4))
			base += 4;
		if (!rdw(g->data, g->size, base + FUNCDATA_INLTREE * g->ptrsize, g->ptrsize,
			 &addr) ||
		    !addr)
			return false;
	} else {
		if (!rd32(g->data, g->size, base + 4 * FUNCDATA_INLTREE, &raw) || raw == UINT32_MAX)
			return false;
		addr = g->gofunc + raw;
	}
	if (addr < g->region_addr || addr - g->region_addr >= g->region_size)
		return false;
	*at = addr - g->region_addr;
	return true;
}

int gopclntab_inline(const struct gopclntab *g, const struct gopclntab_func *f, uint64_t pc,
		     struct gopclntab_inl *out, int max, int *n, const char **file, int *line)
{
	const unsigned esize = g->version == 120 ? 16 : 20;
	uint32_t tab = pcdata(g, f, PCDATA_INLTREE);
	uint64_t tree, at = pc;
	int32_t idx;
	int k = 0;

	*n = 0;
	if (!tab || !inltree(g, f, &tree) || !pcvalue(g, f, tab, pc, &idx))
		return 0;
	while (idx >= 0 && k < max) {
		uint64_t e = tree + (uint64_t)idx * esize;
		uint32_t nameoff, ppc;
		const char *fl = NULL;
		int ln = 0;

		if (e < tree ||
		    !rd32(g->region, g->region_size, e + (esize == 16 ? 4 : 12), &nameoff) ||
		    !rd32(g->region, g->region_size, e + (esize == 16 ? 8 : 16), &ppc))
			break;
		out[k].func = table_str(g->data, g->funcnames, g->funcnames_len, (int32_t)nameoff);
		if (!out[k].func)
			out[k].func = "[inlined]";
		if (gopclntab_line(g, f, at, &fl, &ln))
			fl = NULL, ln = 0;
		out[k].file = fl;
		out[k].line = ln;
		k++;
		at = f->entry + ppc; /* an instruction of the caller, at the call */
		if (at >= f->end)
			break;
		if (esize == 16) {
			if (!pcvalue(g, f, tab, at, &idx))
				break;
		} else {
			int16_t parent;
			memcpy(&parent, g->region + e, 2);
			idx = parent;
		}
	}
	*n = k;
	if (k && gopclntab_line(g, f, at, file, line))
		*file = NULL, *line = 0;
	return 0;
}

/* ---- an ELF file's table ----------------------------------------------------- */

static bool sec_bytes(Elf_Scn *scn, const GElf_Shdr *sh, const uint8_t **p, size_t *size)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size != sh->sh_size)
		return false;
	*p = d->d_buf;
	*size = d->d_size;
	return true;
}

static Elf_Scn *sec_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || !(n = elf_strptr(elf, shstrndx, sh->sh_name)))
			continue;
		if (!strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The section whose bytes hold addr (loaded, in the image), or NULL. */
static Elf_Scn *sec_at(Elf *elf, uint64_t addr, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh) || !(sh->sh_flags & SHF_ALLOC) ||
		    sh->sh_type == SHT_NOBITS)
			continue;
		if (addr >= sh->sh_addr && addr - sh->sh_addr < sh->sh_size)
			return scn;
	}
	return NULL;
}

/* moduledata's gofunc word at index idx (rodata just before it): the
 * region holding it, when rodata <= gofunc lie in one section. */
static bool try_gofunc(Elf *elf, struct gopclntab *g, const uint8_t *p, size_t size, size_t off,
		       unsigned idx)
{
	uint64_t rodata, gofunc;
	const uint8_t *rp;
	size_t rsize;
	GElf_Shdr rsh;
	Elf_Scn *rs;

	if (!rdw(p, size, off + (idx - 1ull) * g->ptrsize, g->ptrsize, &rodata) ||
	    !rdw(p, size, off + (uint64_t)idx * g->ptrsize, g->ptrsize, &gofunc) || !rodata ||
	    rodata > gofunc || !(rs = sec_at(elf, gofunc, &rsh)) || rodata < rsh.sh_addr ||
	    !sec_bytes(rs, &rsh, &rp, &rsize))
		return false;
	gopclntab_set_region(g, rp, rsize, rsh.sh_addr, gofunc);
	return true;
}

/* 1.18+: go:func.* is where moduledata.gofunc says; moduledata is found
 * by its first words: the table's address, then funcnametab's, and its
 * text start is the table's. gofunc is word 38 (1.18, 1.19) or 40 (1.20
 * added covctrs, ecovctrs before it); the other is tried when the
 * expected one does not check out. */
static void find_gofunc(Elf *elf, struct gopclntab *g, uint64_t tab_addr)
{
	const unsigned idx = g->version == 120 ? 40 : 38, other = g->version == 120 ? 38 : 40;
	const uint8_t *p;
	size_t size;
	GElf_Shdr sh;
	Elf_Scn *scn = sec_named(elf, ".noptrdata", &sh);

	if (!scn || !sec_bytes(scn, &sh, &p, &size))
		return;
	for (size_t off = 0; off + 41ull * g->ptrsize <= size; off += g->ptrsize) {
		uint64_t w0, w1, text;

		if (!rdw(p, size, off, g->ptrsize, &w0) || w0 != tab_addr ||
		    !rdw(p, size, off + g->ptrsize, g->ptrsize, &w1) ||
		    w1 != tab_addr + g->funcnames ||
		    !rdw(p, size, off + 22ull * g->ptrsize, g->ptrsize, &text) || text != g->text)
			continue;
		if (!try_gofunc(elf, g, p, size, off, idx))
			try_gofunc(elf, g, p, size, off, other);
		return;
	}
}

/* A table by its magic inside another section (a linker that did not
 * name it): at a pointer-aligned offset, a header that parses and a first
 * function that reads. Its address into *addr. */
static bool scan_magic(Elf *elf, uint64_t text, struct gopclntab *g, uint64_t *addr)
{
	static const char *const where[] = {".data.rel.ro", ".rodata", ".noptrdata"};
	struct gopclntab_func f;

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		const uint8_t *p;
		size_t size;
		GElf_Shdr sh;
		Elf_Scn *scn = sec_named(elf, where[i], &sh);

		if (!scn || !sec_bytes(scn, &sh, &p, &size))
			continue;
		for (size_t off = 0; size >= 8 && off <= size - 8; off += 8) {
			if (p[off + 3] != 0xff || p[off + 2] != 0xff || p[off + 1] != 0xff ||
			    gopclntab_parse(p + off, size - off, text, g))
				continue;
			if (gopclntab_nth(g, 0, &f) == 0 && f.name[0]) {
				*addr = sh.sh_addr + off;
				return true;
			}
		}
	}
	memset(g, 0, sizeof(*g));
	return false;
}

int gopclntab_read(Elf *elf, struct gopclntab *g)
{
	GElf_Shdr sh, tsh;
	const uint8_t *p;
	size_t size;
	Elf_Scn *scn = sec_named(elf, ".gopclntab", &sh);
	uint64_t text = sec_named(elf, ".text", &tsh) ? tsh.sh_addr : 0, addr;

	memset(g, 0, sizeof(*g));
	if (!scn)
		scn = sec_named(elf, ".data.rel.ro.gopclntab", &sh);
	if (scn && sec_bytes(scn, &sh, &p, &size) && gopclntab_parse(p, size, text, g) == 0)
		addr = sh.sh_addr;
	else if (!scan_magic(elf, text, g, &addr))
		return -ENOENT;
	if (g->version == 116) {
		GElf_Shdr rsh;
		Elf_Scn *rs = sec_named(elf, ".rodata", &rsh);
		const uint8_t *rp;
		size_t rsize;

		if (rs && sec_bytes(rs, &rsh, &rp, &rsize))
			gopclntab_set_region(g, rp, rsize, rsh.sh_addr, 0);
	} else {
		find_gofunc(elf, g, addr);
	}
	return 0;
}

/* ---- stack tops ----------------------------------------------------------------- */

bool gopclntab_is_stack_top(const char *name)
{
	static const char *const tops[] = {
	    "runtime.goexit",	 "runtime.mstart",	"runtime.rt0_go",     "runtime.mcall",
	    "runtime.morestack", "runtime.systemstack", "runtime.asmcgocall",
	};
	size_t len;

	if (!name)
		return false;
	len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".abi0"))
		len -= 5;
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (strlen(tops[i]) == len && !strncmp(name, tops[i], len))
			return true;
	return false;
}
