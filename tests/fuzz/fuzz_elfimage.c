/* Fuzz entry point: elfimage, the compact copy of an ELF file made from
 * the target's file with pread (headers parsed by hand, both classes).
 * The bytes are the file (in a memfd); the first byte's low 3 bits are
 * the ELFIMAGE_* flags, bit 3 reads the names later (bit 4: from no
 * file). Whatever the headers say, the image must open or be
 * refused, and every section, segment and note of an image must be
 * readable through libelf within the image, before and after its
 * compressed sections are inflated (elfimage_inflate). Cap: 1 MiB. */
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stacktop/elf/elfimage.h"
#include "stacktop/elf/elfsec.h"

/* inside: every raw section lies in the image (until sections are
 * inflated: libelf then holds their bytes) */
static void walk(Elf *e, bool inside)
{
	Elf_Scn *scn = NULL;
	uint8_t id[20];
	size_t n, len;
	volatile unsigned sum = 0;
	const char *raw = elf_rawfile(e, &len);

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((d = elf_rawdata(scn, NULL)) && d->d_buf) {
			const char *p = d->d_buf;

			if (inside && sh.sh_type != SHT_NOBITS &&
			    (p < raw || p + d->d_size > raw + len))
				abort(); /* raw data outside the image */
			for (size_t i = 0; i < d->d_size; i++)
				sum += (unsigned char)p[i];
		}
	}
	if (elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			(void)gelf_getphdr(e, (int)i, &ph);
		}
	elfsec_build_id(e, id, sizeof(id));
	(void)elfsec_has_symtab(e);
	(void)elfsec_has_dwarf(e);
}

/* Every compressed section inflated as sym does for DWARF (its bytes'
 * pages given back): the rest of the image stays readable. */
static void inflate_all(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			elfimage_inflate(e, scn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	Elf *e;

	if (size < 1)
		return 0;
	if (fd < 0 && (fd = memfd_create("elfimage", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) ||
	    (size > 1 && pwrite(fd, data + 1, size - 1, 0) != (ssize_t)(size - 1)))
		abort();
	if (data[0] & 8) { /* names and CFI read later, as a live module's */
		struct elfimage_pending *p;

		if (elfimage_open_later(fd, data[0] & 7, ELFIMAGE_NAMES, 1u << 20, &e, &p) == 0) {
			walk(e, true); /* zeros before the fill */
			elfimage_fill(e, p, (data[0] & 16) ? -1 : fd);
			walk(e, true);
			elfimage_close(e);
		}
	} else if (elfimage_open(fd, data[0] & 7, 1u << 20, &e) == 0) {
		walk(e, true);
		inflate_all(e);
		walk(e, false);
		elfimage_close(e);
	}
	return 0;
}
