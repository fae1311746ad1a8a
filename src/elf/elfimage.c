/*
 * elfimage — a compact in-memory copy of an ELF file (why and what is
 * copied: elfimage.h).
 *
 * The headers are parsed here, by hand, in both classes, widened to the
 * 64-bit structs and written back in the file's class: libelf cannot be
 * asked to parse a file it has not been given whole, and giving it the fd
 * (ELF_C_READ) would keep the fd and read lazily, later, from a file the
 * target may have changed.
 */
#include "stacktop/elf/elfimage.h"
#include "stacktop/lib/fdread.h"

#include <elf.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SECTIONS (1u << 20)
#define MAX_PHDRS (1u << 16)
#define MAX_NOTE_SEG (1u << 20)
#define MAX_ALIGN 4096

/* A section's tier: the ELFIMAGE_* flag that asks for its bytes; the
 * section names are always copied (libelf and libdw find sections by
 * them). */
enum tier {
	T_NONE = 0,
	T_NAMES = ELFIMAGE_NAMES,
	T_DWARF = ELFIMAGE_DWARF,
	T_CODE = ELFIMAGE_CODE,
	T_ALWAYS = 1 << 8,
};

static _Atomic uint64_t st_images, st_bytes, st_short, st_dwarf, st_refused;

struct sec {
	Elf64_Shdr sh;
	enum tier tier;
	uint64_t file_off, new_off;
};

struct seg {
	Elf64_Phdr ph;
	uint64_t new_off;
	bool blob; /* a PT_NOTE copied on its own */
};

/* Sections laid out in an image but not read yet (elfimage.h). */
struct pending_sec {
	uint64_t new_off, file_off, size;
	size_t index;
};

struct elfimage_pending {
	bool is64;
	uint64_t shoff, shentsize;
	struct pending_sec *secs;
	size_t n;
};

struct file {
	int fd;
	uint64_t size;
	bool is64;
	size_t ehsize, phentsize, shentsize;
	unsigned char ehdr[sizeof(Elf64_Ehdr)];
	Elf64_Ehdr eh;
	struct sec *secs;
	size_t nsec, shstrndx;
	struct seg *segs;
	size_t nseg;
	char *names; /* section name table (a copy), NUL-terminated */
	size_t names_len;
};

/* pread all of [off, off + len) or fail: a short read is a file shorter
 * than its headers said (truncated, or a read error). */
static int read_at(int fd, uint64_t size, void *buf, size_t len, uint64_t off)
{
	if (off > size || len > size - off)
		return -EIO;
	return fdread_at(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

static void widen_ehdr(struct file *f)
{
	if (f->is64) {
		memcpy(&f->eh, f->ehdr, sizeof(f->eh));
		return;
	}
	Elf32_Ehdr e;
	memcpy(&e, f->ehdr, sizeof(e));
	memcpy(f->eh.e_ident, e.e_ident, EI_NIDENT);
	f->eh.e_type = e.e_type;
	f->eh.e_machine = e.e_machine;
	f->eh.e_phoff = e.e_phoff;
	f->eh.e_shoff = e.e_shoff;
	f->eh.e_phentsize = e.e_phentsize;
	f->eh.e_phnum = e.e_phnum;
	f->eh.e_shentsize = e.e_shentsize;
	f->eh.e_shnum = e.e_shnum;
	f->eh.e_shstrndx = e.e_shstrndx;
}

/* A 64-bit file holds the headers as our Elf64 structs: copied whole
 * (true); a 32-bit one is widened or narrowed field by field (false). */
static bool copy_if64(bool is64, void *dst, const void *src, size_t size)
{
	if (is64)
		memcpy(dst, src, size);
	return is64;
}

static void widen_shdr(bool is64, const void *raw, Elf64_Shdr *out)
{
	if (copy_if64(is64, out, raw, sizeof(*out)))
		return;
	Elf32_Shdr s;
	memcpy(&s, raw, sizeof(s));
	*out = (Elf64_Shdr){s.sh_name, s.sh_type, s.sh_flags, s.sh_addr,      s.sh_offset,
			    s.sh_size, s.sh_link, s.sh_info,  s.sh_addralign, s.sh_entsize};
}

static void narrow_shdr(bool is64, const Elf64_Shdr *in, void *raw)
{
	if (copy_if64(is64, raw, in, sizeof(*in)))
		return;
	Elf32_Shdr s = {(Elf32_Word)in->sh_name,      (Elf32_Word)in->sh_type,
			(Elf32_Word)in->sh_flags,     (Elf32_Addr)in->sh_addr,
			(Elf32_Off)in->sh_offset,     (Elf32_Word)in->sh_size,
			(Elf32_Word)in->sh_link,      (Elf32_Word)in->sh_info,
			(Elf32_Word)in->sh_addralign, (Elf32_Word)in->sh_entsize};
	memcpy(raw, &s, sizeof(s));
}

static void widen_phdr(bool is64, const void *raw, Elf64_Phdr *out)
{
	if (copy_if64(is64, out, raw, sizeof(*out)))
		return;
	Elf32_Phdr p;
	memcpy(&p, raw, sizeof(p));
	*out = (Elf64_Phdr){p.p_type,  p.p_flags,  p.p_offset, p.p_vaddr,
			    p.p_paddr, p.p_filesz, p.p_memsz,  p.p_align};
}

static void narrow_phdr(bool is64, const Elf64_Phdr *in, void *raw)
{
	if (copy_if64(is64, raw, in, sizeof(*in)))
		return;
	Elf32_Phdr p = {(Elf32_Word)in->p_type,	 (Elf32_Off)in->p_offset,  (Elf32_Addr)in->p_vaddr,
			(Elf32_Addr)in->p_paddr, (Elf32_Word)in->p_filesz, (Elf32_Word)in->p_memsz,
			(Elf32_Word)in->p_flags, (Elf32_Word)in->p_align};
	memcpy(raw, &p, sizeof(p));
}

/* The ELF header: our byte order, a class we know, sane entry sizes. */
static int read_ehdr(struct file *f)
{
	unsigned char *id = f->ehdr;
	size_t want;

	if (read_at(f->fd, f->size, id, EI_NIDENT, 0) || memcmp(id, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (id[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
#else
	if (id[EI_DATA] != ELFDATA2MSB)
		return -ENOEXEC;
#endif
	f->is64 = id[EI_CLASS] == ELFCLASS64;
	f->ehsize = f->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	f->phentsize = f->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	f->shentsize = f->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	want = f->ehsize;
	if (read_at(f->fd, f->size, id, want, 0))
		return -EIO;
	widen_ehdr(f);
	return 0;
}

/* The section table (none when absent, malformed or not in the file) and
 * the section names. */
/* The n entries of a header table at off into *raw (the caller frees it)
 * and *out (n zeroed elements of elem bytes): 0; or *raw and *out NULL and
 * 0 when the table is cut short (counted, nothing kept), or -ENOMEM. */
static int read_table(struct file *f, uint64_t n, size_t entsize, uint64_t off, size_t elem,
		      unsigned char **raw, void **out)
{
	int err = -ENOMEM;

	*out = NULL;
	if (!(*raw = malloc(n * entsize)))
		return -ENOMEM;
	if (read_at(f->fd, f->size, *raw, n * entsize, off)) {
		atomic_fetch_add(&st_short, 1);
		err = 0;
	} else if ((*out = calloc(n, elem))) {
		return 0;
	}
	free(*raw);
	*raw = NULL;
	return err;
}

static int read_shdrs(struct file *f)
{
	Elf64_Shdr sh0;
	unsigned char *raw;
	uint64_t n;
	int err;

	if (!f->eh.e_shoff || f->eh.e_shentsize != f->shentsize)
		return 0;
	unsigned char buf0[sizeof(Elf64_Shdr)];
	if (read_at(f->fd, f->size, buf0, f->shentsize, f->eh.e_shoff)) {
		atomic_fetch_add(&st_short, 1);
		return 0;
	}
	widen_shdr(f->is64, buf0, &sh0);
	n = f->eh.e_shnum ? f->eh.e_shnum : sh0.sh_size;
	f->shstrndx = f->eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : f->eh.e_shstrndx;
	if (n == 0 || n > MAX_SECTIONS)
		return 0;
	err = read_table(f, n, f->shentsize, f->eh.e_shoff, sizeof(*f->secs), &raw,
			 (void **)&f->secs);
	if (!raw)
		return err;
	for (size_t i = 0; i < n; i++) {
		widen_shdr(f->is64, raw + i * f->shentsize, &f->secs[i].sh);
		f->secs[i].file_off = f->secs[i].sh.sh_offset;
	}
	free(raw);
	f->nsec = n;
	return 0;
}

static int read_phdrs(struct file *f)
{
	unsigned char *raw;
	uint64_t n = f->eh.e_phnum;
	int err;

	if (n == PN_XNUM)
		n = f->nsec ? f->secs[0].sh.sh_info : 0;
	if (!f->eh.e_phoff || !n || n > MAX_PHDRS || f->eh.e_phentsize != f->phentsize)
		return 0;
	err = read_table(f, n, f->phentsize, f->eh.e_phoff, sizeof(*f->segs), &raw,
			 (void **)&f->segs);
	if (!raw)
		return err;
	for (size_t i = 0; i < n; i++)
		widen_phdr(f->is64, raw + i * f->phentsize, &f->segs[i].ph);
	free(raw);
	f->nseg = n;
	return 0;
}

/* Section names, for telling .eh_frame from .rodata (capped; a table that
 * cannot be read leaves every section nameless: only types decide). */
static int read_names(struct file *f)
{
	const Elf64_Shdr *sh;

	if (!f->nsec || f->shstrndx >= f->nsec)
		return 0;
	sh = &f->secs[f->shstrndx].sh;
	if (sh->sh_type != SHT_STRTAB || sh->sh_size == 0 || sh->sh_size > (16u << 20))
		return 0;
	if (!(f->names = malloc(sh->sh_size + 1)))
		return -ENOMEM;
	if (read_at(f->fd, f->size, f->names, sh->sh_size, sh->sh_offset)) {
		atomic_fetch_add(&st_short, 1);
		free(f->names);
		f->names = NULL;
		return 0;
	}
	f->names[sh->sh_size] = '\0';
	f->names_len = sh->sh_size;
	return 0;
}

static const char *sec_name(const struct file *f, const Elf64_Shdr *sh)
{
	return f->names && sh->sh_name < f->names_len ? f->names + sh->sh_name : "";
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* DWARF that lines, inlines and scopes never read (variable locations,
 * macros, name indexes): left out of every image. */
static bool unused_dwarf(const char *name)
{
	static const char *const skip[] = {
	    "loc",	"loclists",	"macro",	"macinfo", "pubnames",
	    "pubtypes", "gnu_pubnames", "gnu_pubtypes", "names",
	};
	const char *p = starts(name, ".debug_")	   ? name + 7
			: starts(name, ".zdebug_") ? name + 8
						   : NULL;

	for (size_t i = 0; p && i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(p, skip[i]))
			return true;
	return false;
}

/* Go's function table (elf/gopclntab.h): names, lines and stack deltas
 * of a Go binary, stripped or not. */
static bool is_gopclntab(const char *name)
{
	return !strcmp(name, ".gopclntab") || !strcmp(name, ".data.rel.ro.gopclntab");
}

/* A section only Go's linker writes: the file is a Go binary, whose
 * function table may sit unnamed in another section. */
static bool is_go(const char *name)
{
	return is_gopclntab(name) || !strcmp(name, ".go.buildinfo") ||
	       !strcmp(name, ".note.go.buildid");
}

/* Which tier a section's bytes belong to (T_NONE: header only). String
 * tables are decided afterwards, by who links to them. */
static enum tier classify(const struct file *f, const Elf64_Shdr *sh, unsigned flags)
{
	const char *name = sec_name(f, sh);

	if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL || sh->sh_size == 0)
		return T_NONE;
	switch (sh->sh_type) {
	case SHT_NOTE:
	case SHT_SYMTAB:
	case SHT_DYNSYM:
	case SHT_SYMTAB_SHNDX:
		return T_NAMES;
	default:
		break;
	}
	if (!strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr") ||
	    !strcmp(name, ".debug_frame") || !strcmp(name, ".gnu_debuglink") ||
	    !strcmp(name, ".gnu_debugaltlink"))
		return T_NAMES;
	if (is_gopclntab(name))
		return T_NAMES;
	/* The PLT's relocations name its stubs ("strlen@plt"): a few KiB. */
	if ((sh->sh_type == SHT_RELA || sh->sh_type == SHT_REL) &&
	    (!strcmp(name, ".rela.plt") || !strcmp(name, ".rel.plt")))
		return T_NAMES;
	if (unused_dwarf(name))
		return T_NONE;
	if (starts(name, ".debug_") || starts(name, ".zdebug_"))
		return T_DWARF;
	if ((flags & ELFIMAGE_CODE) && sh->sh_type == SHT_PROGBITS &&
	    (sh->sh_flags & SHF_EXECINSTR))
		return T_CODE;
	return T_NONE;
}

static void classify_all(struct file *f, unsigned flags)
{
	bool go = false;

	for (size_t i = 1; i < f->nsec; i++) {
		f->secs[i].tier = classify(f, &f->secs[i].sh, flags);
		go |= is_go(sec_name(f, &f->secs[i].sh));
	}
	/* A Go file's names: its function table, and where the inline trees
	 * (go:func.* in .rodata) and moduledata (.noptrdata, pointing at
	 * them) are, and where an unnamed table may be (.data.rel.ro):
	 * elf/gopclntab.h. */
	for (size_t i = 1; go && i < f->nsec; i++) {
		const char *name = sec_name(f, &f->secs[i].sh);

		if (f->secs[i].sh.sh_type == SHT_PROGBITS &&
		    (!strcmp(name, ".rodata") || !strcmp(name, ".noptrdata") ||
		     !strcmp(name, ".data.rel.ro")))
			f->secs[i].tier = T_NAMES;
	}
	/* the string tables of kept symbol tables, and the section names */
	for (size_t i = 1; i < f->nsec; i++) {
		const Elf64_Shdr *sh = &f->secs[i].sh;

		if ((sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM) && sh->sh_link &&
		    sh->sh_link < f->nsec && f->secs[sh->sh_link].sh.sh_type == SHT_STRTAB)
			f->secs[sh->sh_link].tier = T_NAMES;
	}
	if (f->names && f->shstrndx && f->shstrndx < f->nsec)
		f->secs[f->shstrndx].tier = T_ALWAYS;
}

static uint64_t align_of(const Elf64_Shdr *sh)
{
	uint64_t a = sh->sh_addralign;

	if (a <= 1)
		return 1;
	if (a & (a - 1))
		return 8;
	return a > MAX_ALIGN ? MAX_ALIGN : a;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static bool kept(const struct sec *s, unsigned mask)
{
	return s->tier & (mask | T_ALWAYS);
}

/* Lay the image out with the sections of the tiers in mask; its size.
 * Sections not in the file's bounds are not kept (their bytes do not
 * exist: counted as a short read). */
static uint64_t layout(struct file *f, unsigned mask)
{
	uint64_t off = f->ehsize;

	off = align_up(off, 8) + f->nseg * f->phentsize;
	for (size_t i = 0; i < f->nseg; i++) {
		struct seg *s = &f->segs[i];

		s->blob =
		    s->ph.p_type == PT_NOTE && s->ph.p_filesz > 0 && s->ph.p_filesz <= MAX_NOTE_SEG;
		if (s->blob) {
			off = align_up(off, 8);
			s->new_off = off;
			off += s->ph.p_filesz;
		}
	}
	for (size_t i = 1; i < f->nsec; i++) {
		struct sec *s = &f->secs[i];

		if (!kept(s, mask))
			continue;
		off = align_up(off, align_of(&s->sh));
		s->new_off = off;
		off += s->sh.sh_size;
	}
	return align_up(off, 8) + f->nsec * f->shentsize;
}

/* Where a non-PT_LOAD segment lies in the image: in a kept section that
 * holds its whole file range, else nowhere (no file bytes). After fill's
 * section pass: a section it kept has tier != T_NONE. */
static void place_segment(const struct file *f, struct seg *s)
{
	if (s->blob || s->ph.p_type == PT_LOAD)
		return;
	for (size_t i = 1; i < f->nsec; i++) {
		const struct sec *c = &f->secs[i];

		if (c->tier == T_NONE)
			continue;
		if (s->ph.p_offset >= c->file_off &&
		    s->ph.p_offset - c->file_off <= c->sh.sh_size &&
		    s->ph.p_filesz <= c->sh.sh_size - (s->ph.p_offset - c->file_off)) {
			s->ph.p_offset = c->new_off + (s->ph.p_offset - c->file_off);
			return;
		}
	}
	s->ph.p_offset = 0;
	s->ph.p_filesz = 0;
}

/* Copy the bytes and write the headers. A section that cannot be read is
 * left SHT_NOBITS. */
/* Copy the bytes (all but those of the tiers in later, which are
 * recorded in *pend instead) and write the headers. A section that
 * cannot be read is left SHT_NOBITS. */
static int fill(struct file *f, unsigned char *img, uint64_t len, unsigned mask, unsigned later,
		struct elfimage_pending *pend)
{
	uint64_t phoff = align_up(f->ehsize, 8), shoff = len - f->nsec * f->shentsize, copied = 0;
	unsigned char eh[sizeof(Elf64_Ehdr)];

	for (size_t i = 0; i < f->nseg; i++) {
		struct seg *s = &f->segs[i];

		if (s->blob &&
		    read_at(f->fd, f->size, img + s->new_off, s->ph.p_filesz, s->ph.p_offset)) {
			atomic_fetch_add(&st_short, 1);
			s->blob = false;
		}
		if (s->blob) {
			s->ph.p_offset = s->new_off;
			copied += s->ph.p_filesz;
		}
	}
	for (size_t i = 1; i < f->nsec; i++) {
		struct sec *s = &f->secs[i];
		bool keep = kept(s, mask);

		if (keep && (s->tier & later)) {
			struct pending_sec *ps = &pend->secs[pend->n++];

			*ps = (struct pending_sec){s->new_off, s->sh.sh_offset, s->sh.sh_size, i};
			s->sh.sh_offset = s->new_off;
			continue;
		}
		if (keep &&
		    read_at(f->fd, f->size, img + s->new_off, s->sh.sh_size, s->sh.sh_offset)) {
			atomic_fetch_add(&st_short, 1);
			keep = false;
		}
		if (keep) {
			s->sh.sh_offset = s->new_off;
			copied += s->sh.sh_size;
			continue;
		}
		if (s->sh.sh_type != SHT_NULL && s->sh.sh_type != SHT_NOBITS) {
			s->sh.sh_type = SHT_NOBITS;
			s->sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		}
		s->sh.sh_offset = shoff;
		s->tier = T_NONE;
	}
	for (size_t i = 0; i < f->nseg; i++) {
		place_segment(f, &f->segs[i]);
		narrow_phdr(f->is64, &f->segs[i].ph, img + phoff + i * f->phentsize);
	}
	for (size_t i = 0; i < f->nsec; i++)
		narrow_shdr(f->is64, &f->secs[i].sh, img + shoff + i * f->shentsize);
	/* the header: offsets into the image; no table, no count */
	memcpy(eh, f->ehdr, f->ehsize);
	if (f->is64) {
		Elf64_Ehdr *e = (Elf64_Ehdr *)eh;
		e->e_phoff = f->nseg ? phoff : 0;
		e->e_shoff = f->nsec ? shoff : 0;
		if (!f->nseg)
			e->e_phnum = 0;
		if (!f->nsec)
			e->e_shnum = e->e_shstrndx = 0;
	} else {
		Elf32_Ehdr *e = (Elf32_Ehdr *)eh;
		e->e_phoff = f->nseg ? (Elf32_Off)phoff : 0;
		e->e_shoff = f->nsec ? (Elf32_Off)shoff : 0;
		if (!f->nseg)
			e->e_phnum = 0;
		if (!f->nsec)
			e->e_shnum = e->e_shstrndx = 0;
	}
	memcpy(img, eh, f->ehsize);
	atomic_fetch_add(&st_bytes, copied);
	pend->is64 = f->is64;
	pend->shoff = shoff;
	pend->shentsize = f->shentsize;
	return 0;
}

static void file_free(struct file *f)
{
	free(f->secs);
	free(f->segs);
	free(f->names);
}

/* Which tiers fit the cap: all asked, else without code, else without
 * DWARF; 0 when what is left is still over it. */
static unsigned choose(struct file *f, unsigned flags, uint64_t cap, uint64_t *len)
{
	unsigned mask = flags & (T_NAMES | T_DWARF | T_CODE);
	bool had_dwarf = false;

	for (size_t i = 1; i < f->nsec; i++)
		had_dwarf |= f->secs[i].tier == T_DWARF;
	if ((*len = layout(f, mask)) <= cap)
		return mask;
	if ((mask & T_CODE) && (*len = layout(f, mask &= ~T_CODE)) <= cap)
		return mask;
	if ((mask & T_DWARF) && had_dwarf)
		atomic_fetch_add(&st_dwarf, 1);
	mask &= ~T_DWARF;
	if (mask && (*len = layout(f, mask)) <= cap)
		return mask;
	return 0;
}

int elfimage_open_later(int fd, unsigned flags, unsigned later, uint64_t cap, Elf **out,
			struct elfimage_pending **pending)
{
	struct file f = {.fd = fd};
	struct elfimage_pending *pend = NULL;
	unsigned char *img;
	struct stat st;
	unsigned mask;
	uint64_t len;
	int err;

	*out = NULL;
	if (pending)
		*pending = NULL;
	else
		later = 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	f.size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	if ((err = read_ehdr(&f)) || (err = read_shdrs(&f)) || (err = read_phdrs(&f)) ||
	    (err = read_names(&f)))
		goto out;
	classify_all(&f, flags);
	/* mask 0 is a refusal only when a tier was asked for (flags 0:
	 * headers and section names, refused only over cap) */
	if (!(mask = choose(&f, flags, cap, &len)) &&
	    ((flags & (T_NAMES | T_DWARF | T_CODE)) || len > cap)) {
		atomic_fetch_add(&st_refused, 1);
		err = -EFBIG;
		goto out;
	}
	/* calloc: a large image is fresh anonymous memory, so the pages of
	 * sections read later cost nothing until they are read */
	if (!(img = calloc(1, len)) || !(pend = calloc(1, sizeof(*pend))) ||
	    (f.nsec && !(pend->secs = calloc(f.nsec, sizeof(*pend->secs))))) {
		free(img);
		elfimage_pending_free(pend);
		err = -ENOMEM;
		goto out;
	}
	fill(&f, img, len, mask, later & mask, pend);
	elf_version(EV_CURRENT);
	*out = elf_memory((char *)img, len);
	if (!*out || elf_kind(*out) != ELF_K_ELF) {
		if (*out)
			elf_end(*out);
		*out = NULL;
		free(img);
		elfimage_pending_free(pend);
		err = -ENOEXEC;
		goto out;
	}
	atomic_fetch_add(&st_images, 1);
	if (pending && pend->n)
		*pending = pend;
	else
		elfimage_pending_free(pend);
out:
	file_free(&f);
	return err;
}

int elfimage_open(int fd, unsigned flags, uint64_t cap, Elf **out)
{
	return elfimage_open_later(fd, flags, 0, cap, out, NULL);
}

/* A section whose bytes never came: SHT_NOBITS, written into the image's
 * own section table, which libelf reads in place (elf_memory, our byte
 * order), so gelf_getshdr says so from now on. */
static void mark_nobits(Elf *e, const struct elfimage_pending *p, const struct pending_sec *ps)
{
	size_t len;
	char *img = elf_rawfile(e, &len);
	uint64_t at = p->shoff + ps->index * p->shentsize + 4; /* sh_type, both classes */
	uint32_t t = SHT_NOBITS;

	if (img && at + sizeof(t) <= len)
		memcpy(img + at, &t, sizeof(t));
	atomic_fetch_add(&st_short, 1);
}

void elfimage_fill(Elf *e, struct elfimage_pending *p, int fd)
{
	size_t len;
	char *img;
	struct stat st;
	uint64_t size = 0, copied = 0;

	if (!p)
		return;
	img = e ? elf_rawfile(e, &len) : NULL;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0)
		size = (uint64_t)st.st_size;
	for (size_t i = 0; img && i < p->n; i++) {
		const struct pending_sec *ps = &p->secs[i];

		if (fd < 0 || ps->new_off > len || ps->size > len - ps->new_off ||
		    read_at(fd, size, img + ps->new_off, ps->size, ps->file_off))
			mark_nobits(e, p, ps);
		else
			copied += ps->size;
	}
	atomic_fetch_add(&st_bytes, copied);
	elfimage_pending_free(p);
}

void elfimage_pending_free(struct elfimage_pending *p)
{
	if (!p)
		return;
	free(p->secs);
	free(p);
}

int elfimage_inflate(Elf *e, Elf_Scn *scn)
{
	size_t len, page = (size_t)sysconf(_SC_PAGESIZE);
	char *img = elf_rawfile(e, &len);
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
		return 0;
	if (elf_compress(scn, 0, 0) < 0)
		return -EIO;
	if (!img || sh.sh_offset > len || sh.sh_size > len - sh.sh_offset)
		return 0;
	/* only whole pages inside the section: the image's other bytes stay;
	 * these read as zeros if anything touched them again */
	uintptr_t lo = ((uintptr_t)img + sh.sh_offset + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t hi = ((uintptr_t)img + sh.sh_offset + sh.sh_size) & ~(uintptr_t)(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
	return 0;
}

void elfimage_close(Elf *e)
{
	char *img;

	if (!e)
		return;
	/* elf_memory's image is what elf_rawfile hands back */
	img = elf_rawfile(e, NULL);
	elf_end(e);
	free(img);
}

void elfimage_stats_get(struct elfimage_stats *out)
{
	out->images = atomic_load(&st_images);
	out->bytes = atomic_load(&st_bytes);
	out->short_reads = atomic_load(&st_short);
	out->dwarf_dropped = atomic_load(&st_dwarf);
	out->refused = atomic_load(&st_refused);
}
