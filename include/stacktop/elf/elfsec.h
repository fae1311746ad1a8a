/*
 * elfsec — small questions asked of an ELF file through libelf: a section
 * by name or type, the GNU build-id, whether it has a symbol table or
 * DWARF, whether an address is a PLT stub and whose, the file offset of an
 * address.
 *
 * Contract: every function reads the Elf handed in (the caller's, opened
 * and ended by the caller: space's modules, sym's debug files) and keeps
 * nothing; nothing allocates, so nothing is freed. The file is the
 * target's, so every answer is checked against the section table it
 * has, never trusted further. Thread safe as far as libelf reads are.
 */
#ifndef STACKTOP_ELFSEC_H
#define STACKTOP_ELFSEC_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first section called name (its header into *sh), or NULL. */
Elf_Scn *elfsec_find(Elf *elf, const char *name, GElf_Shdr *sh);
/* The first section of type (SHT_*; its header into *sh), or NULL. */
Elf_Scn *elfsec_find_type(Elf *elf, GElf_Word type, GElf_Shdr *sh);

/* The GNU build-id (NT_GNU_BUILD_ID) into out, at most cap bytes; its
 * length, 0 when there is none. From the first PT_NOTE segment that has
 * one, else the first SHT_NOTE section (a file with no program headers,
 * or whose segments hold none); an empty descriptor is skipped. */
size_t elfsec_build_id(Elf *elf, uint8_t *out, size_t cap);

/* Has a real (not NOBITS) .symtab. */
bool elfsec_has_symtab(Elf *elf);
/* Has a real .debug_info (or .zdebug_info). */
bool elfsec_has_dwarf(Elf *elf);
/* Is addr inside .plt, .plt.sec or .plt.got? */
bool elfsec_in_plt(Elf *elf, uint64_t addr);
/* "strlen@plt": the stub at addr named by its relocation's symbol, as
 * perf names it. Stub i of .plt.sec (IBT), or i + 1 of .plt (entry 0 is
 * the resolver's), is reloc i of .rela.plt (.rel.plt), its symbol in the
 * table it links to. 0, or -ENOENT (the resolver, .plt.got, no relocs,
 * an index or symbol out of range: the caller says "[plt]"). */
int elfsec_plt_name(Elf *elf, uint64_t addr, char *buf, size_t size);
/* The file offset of an ELF address (through its PT_LOAD), as the views
 * show addresses without a name; the address itself outside every load. */
uint64_t elfsec_file_offset(Elf *elf, uint64_t addr);
/* The ELF address and size of the defined symbol called name, from
 * .dynsym, else .symtab (a linear scan: for a few names a file, as the
 * runtime readers ask, never per sample). 0, or -ENOENT. */
int elfsec_symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size);

#endif
