/* Fuzz entry point: Go's .gopclntab (elf/gopclntab), read from a target's
 * file, so hostile by definition. Input: a little-endian uint32 L, L bytes
 * of the go:func.* region (inline trees, loaded at 0x500000 with gofunc
 * there), then the table; or a whole ELF file ("\x7fELF..."), whose table,
 * moduledata and go:func.* gopclntab_read finds by section. Every function the table lists is
 * looked up at a few of its pcs: name, file:line, SP delta, inline chain; every string handed out
 * must end inside the input (ASan checks the strlen). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/elf/gopclntab.h"

#include <gelf.h>

static size_t sink;

static void check_str(const char *s)
{
	if (s)
		sink += strlen(s);
}

static void walk(const struct gopclntab *gp);

/* The input as an ELF file (libelf over a copy). */
static void from_elf(const uint8_t *data, size_t size)
{
	struct gopclntab g;
	char *copy = malloc(size);
	Elf *e;

	if (!copy)
		return;
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	if ((e = elf_memory(copy, size))) {
		if (gopclntab_read(e, &g) == 0)
			walk(&g);
		elf_end(e);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab g;
	uint32_t rlen;

	if (size < 4)
		return 0;
	if (!memcmp(data,
		    "\x7f"
		    "ELF",
		    4)) {
		from_elf(data, size);
		return 0;
	}
	memcpy(&rlen, data, 4);
	if (rlen > size - 4)
		rlen = (uint32_t)(size - 4);
	if (gopclntab_parse(data + 4 + rlen, size - 4 - rlen, 0x401000, &g) != 0)
		return 0;
	gopclntab_set_region(&g, data + 4, rlen, 0x500000, 0x500000);
	walk(&g);
	return 0;
}

/* Every function (64 at most) at a few of its pcs. */
static void walk(const struct gopclntab *gp)
{
	const struct gopclntab g = *gp;
	struct gopclntab_func f, h;
	struct gopclntab_inl inl[4];

	for (uint64_t i = 0; i < g.nfunc && i < 64; i++) {
		if (gopclntab_nth(&g, i, &f) != 0)
			continue;
		check_str(f.name);
		if (f.entry >= f.end)
			abort();
		for (uint64_t pc = f.entry; pc < f.end && pc < f.entry + 48; pc += 3) {
			const char *file = NULL;
			int line, n;
			int32_t d;

			if (gopclntab_find(&g, pc, &h) == 0 && (pc < h.entry || pc >= h.end))
				abort();
			if (gopclntab_line(&g, &f, pc, &file, &line) == 0)
				check_str(file);
			gopclntab_sp_delta(&g, &f, pc, &d);
			gopclntab_inline(&g, &f, pc, inl, 4, &n, &file, &line);
			if (n < 0 || n > 4)
				abort();
			for (int k = 0; k < n; k++) {
				check_str(inl[k].func);
				check_str(inl[k].file);
			}
			if (n)
				check_str(file);
		}
	}
}
