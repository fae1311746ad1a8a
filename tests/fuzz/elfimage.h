/*
 * elfimage.h — a minimal ELF64 image around a given .symtab and .strtab,
 * for the symbol-table fuzzer (fuzz_symtab) and test_sym: section 1 is
 * .text (NOBITS, executable, at ELFIMAGE_TEXT, ELFIMAGE_TEXT_SIZE bytes),
 * 2 .symtab (linked to 3), 3 .strtab, 4 .shstrtab. The symbol bytes are
 * used as given (whole 24-byte entries; a zero entry 0 is put first), so
 * their names, values, sizes and section indices may be anything. Header
 * only, static functions.
 */
#ifndef STACKTOP_FUZZ_ELFIMAGE_H
#define STACKTOP_FUZZ_ELFIMAGE_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ELFIMAGE_TEXT 0x1000ull
#define ELFIMAGE_TEXT_SIZE 0x100000ull

/* The header of a string table section: name (an offset in .shstrtab),
 * size bytes at off in the file. */
static inline Elf64_Shdr elfimage_strtab(Elf64_Word name, size_t off, size_t size)
{
	return (Elf64_Shdr){.sh_name = name,
			    .sh_type = SHT_STRTAB,
			    .sh_offset = off,
			    .sh_size = size,
			    .sh_addralign = 1};
}

/* A malloc'd image (*len bytes) of syms (nsym_bytes, cut to whole
 * entries) and strs (nstr bytes; a NUL is put before and after them). */
static inline uint8_t *elfimage_build(const uint8_t *syms, size_t nsym_bytes, const uint8_t *strs,
				      size_t nstr, size_t *len)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	size_t nsym = nsym_bytes / sizeof(Elf64_Sym) + 1;
	size_t sym_off = sizeof(Elf64_Ehdr), str_off = sym_off + nsym * sizeof(Elf64_Sym);
	size_t strsz = nstr + 2, shstr_off = str_off + strsz;
	size_t sh_off = (shstr_off + sizeof(shstr) + 7) & ~(size_t)7;
	size_t total = sh_off + 5 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, total);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;

	if (!img)
		return NULL;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	memcpy(img + sym_off + sizeof(Elf64_Sym), syms, (nsym - 1) * sizeof(Elf64_Sym));
	if (nstr)
		memcpy(img + str_off + 1, strs, nstr);
	memcpy(img + shstr_off, shstr, sizeof(shstr));
	sh = (Elf64_Shdr *)(img + sh_off);
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_NOBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = ELFIMAGE_TEXT,
			     .sh_offset = sym_off,
			     .sh_size = ELFIMAGE_TEXT_SIZE,
			     .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = SHT_SYMTAB,
			     .sh_offset = sym_off,
			     .sh_size = nsym * sizeof(Elf64_Sym),
			     .sh_link = 3,
			     .sh_info = 1,
			     .sh_addralign = 8,
			     .sh_entsize = sizeof(Elf64_Sym)};
	sh[3] = elfimage_strtab(15, str_off, strsz);
	sh[4] = elfimage_strtab(23, shstr_off, sizeof(shstr));
	*len = total;
	return img;
}

/* One symbol entry: a function of section 1 (st_name: offset in strs + 1,
 * as elfimage_build shifts the strings by one). */
static inline Elf64_Sym elfimage_func(uint32_t name, uint64_t value, uint64_t size, int bind)
{
	return (Elf64_Sym){.st_name = name + 1,
			   .st_info = (unsigned char)ELF64_ST_INFO(bind, STT_FUNC),
			   .st_shndx = 1,
			   .st_value = value,
			   .st_size = size};
}

#endif
