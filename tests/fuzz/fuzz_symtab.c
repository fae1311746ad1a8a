/* Fuzz entry point: the symbol-table builder (sym.c) over a hostile ELF
 * .symtab and .strtab (tests/fuzz/elfimage.h wraps them in an ELF image):
 * names at any offset, unterminated, huge or shared by many symbols;
 * aliases, overlaps and size-0 symbols. The input is two bytes giving the
 * symbol bytes' length (little-endian), the symbol entries, then the string
 * table. Each input builds a table through sym_resolve_module and looks up
 * the symbols' own addresses and a few others; every name shown must fit
 * SYM_NAME_MAX. */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfimage.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/unwind/space.h"

static struct sym *sy;

static void check(const struct sym_info *si)
{
	if (si->func && strlen(si->func) >= SYM_NAME_MAX)
		abort(); /* a name longer than the cap */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module mod = {.name = "fuzz", .refs = 1};
	struct sym_info si;
	size_t nsym, len;
	uint8_t *img;

	if (!sy && sym_new(&sy))
		abort();
	if (size < 2)
		return 0;
	nsym = ((size_t)data[0] | (size_t)data[1] << 8) % (size - 1);
	img = elfimage_build(data + 2, nsym, data + 2 + nsym, size - 2 - nsym, &len);
	if (!img)
		return 0;
	mod.elf = elf_memory((char *)img, len);
	if (mod.elf) {
		size_t n = nsym / sizeof(Elf64_Sym);

		for (size_t i = 0; i < n && i < 64; i++) {
			Elf64_Sym s;

			memcpy(&s, data + 2 + i * sizeof(s), sizeof(s));
			if (sym_resolve_module(sy, &mod, "", s.st_value, false, &si) == 0)
				check(&si);
			if (sym_resolve_module(sy, &mod, "", s.st_value + s.st_size / 2, false,
					       &si) == 0)
				check(&si);
		}
		for (uint64_t a = ELFIMAGE_TEXT; a < ELFIMAGE_TEXT + 0x400; a += 0x40) {
			if (sym_resolve_module(sy, &mod, "", a, false, &si) == 0)
				check(&si);
		}
		for (int i = 0; i < SPACE_EXT_COUNT; i++) {
			if (mod.ext[i] && mod.ext_free[i])
				mod.ext_free[i](mod.ext[i]);
		}
		elf_end(mod.elf);
	}
	free(img);
	return 0;
}
