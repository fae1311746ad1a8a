/*
 * elfsec — sections, notes and segments of an ELF file (see elfsec.h).
 *
 * Lookups walk the section or program header table each time: they are
 * asked once per module or per debug file, not per sample, and a table is
 * a few dozen entries.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stacktop/elf/elfsec.h"

Elf_Scn *elfsec_find(Elf *elf, const char *name, GElf_Shdr *sh)
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

Elf_Scn *elfsec_find_type(Elf *elf, GElf_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	}
	return NULL;
}

/* The GNU build-id among the notes in data, into out (at most cap bytes);
 * its length, or 0. */
static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t cap)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz > 0) {
			size_t len = nh.n_descsz < cap ? nh.n_descsz : cap;

			memcpy(out, (const char *)data->d_buf + desc_off, len);
			return len;
		}
	}
	return 0;
}

size_t elfsec_build_id(Elf *elf, uint8_t *out, size_t cap)
{
	size_t i, nph, len = 0;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(elf, &nph) == 0) {
		for (i = 0; i < nph && !len; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ELF_T_NHDR);
			if (d)
				len = note_build_id(d, out, cap);
		}
	}
	while (!len && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d)
			len = note_build_id(d, out, cap);
	}
	return len;
}

bool elfsec_has_symtab(Elf *elf)
{
	GElf_Shdr sh;

	return elfsec_find_type(elf, SHT_SYMTAB, &sh) && sh.sh_size > 0;
}

bool elfsec_has_dwarf(Elf *elf)
{
	GElf_Shdr sh;

	return (elfsec_find(elf, ".debug_info", &sh) || elfsec_find(elf, ".zdebug_info", &sh)) &&
	       sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

bool elfsec_in_plt(Elf *elf, uint64_t addr)
{
	static const char *const names[] = {".plt", ".plt.sec", ".plt.got"};
	GElf_Shdr sh;

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (elfsec_find(elf, names[k], &sh) && addr >= sh.sh_addr &&
		    addr < sh.sh_addr + sh.sh_size)
			return true;
	return false;
}

/* The relocation section of the PLT (.rela.plt, or .rel.plt) and its
 * data; NULL when absent or empty. */
static Elf_Data *plt_relocs(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = elfsec_find(elf, ".rela.plt", sh);
	Elf_Data *d;

	if (!scn)
		scn = elfsec_find(elf, ".rel.plt", sh);
	if (!scn || (sh->sh_type != SHT_RELA && sh->sh_type != SHT_REL) || !sh->sh_entsize)
		return NULL;
	if (!(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
		return NULL;
	return d;
}

/* The symbol of the PLT's reloc number i: its name in the linked symbol
 * table, or NULL. */
static const char *plt_reloc_name(Elf *elf, size_t i)
{
	GElf_Shdr sh, symsh;
	Elf_Data *d = plt_relocs(elf, &sh), *syms;
	Elf_Scn *symscn;
	GElf_Rela rela;
	GElf_Rel rel;
	GElf_Sym sym;
	uint64_t info;

	if (!d || i >= d->d_size / sh.sh_entsize)
		return NULL;
	if (sh.sh_type == SHT_RELA) {
		if (!gelf_getrela(d, (int)i, &rela))
			return NULL;
		info = rela.r_info;
	} else {
		if (!gelf_getrel(d, (int)i, &rel))
			return NULL;
		info = rel.r_info;
	}
	if (!(symscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
	    !(syms = elf_getdata(symscn, NULL)))
		return NULL;
	size_t si = gelf_getclass(elf) == ELFCLASS32 ? ELF32_R_SYM(info) : GELF_R_SYM(info);
	if (!si || !gelf_getsym(syms, (int)si, &sym) || !sym.st_name)
		return NULL;
	return elf_strptr(elf, symsh.sh_link, sym.st_name);
}

int elfsec_plt_name(Elf *elf, uint64_t addr, char *buf, size_t size)
{
	GElf_Shdr plt, sec, rsh;
	uint64_t entry;
	size_t i;
	const char *name;

	if (!plt_relocs(elf, &rsh))
		return -ENOENT;
	/* With IBT the calls go to .plt.sec, one 16-byte stub per reloc in
	 * order; without it to .plt, whose entry 0 is the resolver's. */
	if (elfsec_find(elf, ".plt.sec", &sec) && addr >= sec.sh_addr &&
	    addr < sec.sh_addr + sec.sh_size) {
		i = (size_t)((addr - sec.sh_addr) / 16);
	} else if (elfsec_find(elf, ".plt", &plt) && addr >= plt.sh_addr &&
		   addr < plt.sh_addr + plt.sh_size) {
		entry = (addr - plt.sh_addr) / 16;
		if (entry == 0 || elfsec_find(elf, ".plt.sec", &sec))
			return -ENOENT; /* the resolver, or a lazy stub */
		i = (size_t)(entry - 1);
	} else {
		return -ENOENT;
	}
	if (!(name = plt_reloc_name(elf, i)) || !name[0])
		return -ENOENT;
	snprintf(buf, size, "%s@plt", name);
	return 0;
}

uint64_t elfsec_file_offset(Elf *elf, uint64_t addr)
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

/* One symbol table's defined symbol called name. */
static bool table_symbol(Elf *elf, GElf_Word type, const char *name, uint64_t *value,
			 uint64_t *size)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elfsec_find_type(elf, type, &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Sym sym;

	if (!data || sh.sh_type == SHT_NOBITS || !sh.sh_entsize)
		return false;
	for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; i++) {
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		s = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			*value = sym.st_value;
			*size = sym.st_size;
			return true;
		}
	}
	return false;
}

int elfsec_symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	return table_symbol(elf, SHT_DYNSYM, name, value, size) ||
		       table_symbol(elf, SHT_SYMTAB, name, value, size)
		   ? 0
		   : -ENOENT;
}
