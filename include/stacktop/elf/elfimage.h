/*
 * elfimage — a compact in-memory copy of an ELF file: what stacktop reads
 * of it, nothing else, and no mapping of the file.
 *
 * Why: a mapped file stays the target's. A target that truncates its own
 * library (or a FUSE daemon that fails a page read) turns every later read
 * of a mapped page into SIGBUS, inside libdw or libelf, long after the
 * file was checked. A copy made with pread cannot fault: a short read is
 * an error at open time, and after that the bytes are ours. Copying the
 * whole file would cost its size (a 100 MB libxul, mostly code nobody
 * reads), so only the parts stacktop uses are copied:
 *
 * Always: the ELF header and program headers (PT_LOAD keeps its file
 * offsets, which the bias and file-offset arithmetic use; they point at
 * nothing in the image), each PT_NOTE segment as a blob the segment then
 * points at (the build-id), and the section names. Then what flags ask:
 *
 *   ELFIMAGE_NAMES  SHT_NOTE sections; the CFI (.eh_frame, .eh_frame_hdr,
 *                   which PT_GNU_EH_FRAME points into, .debug_frame);
 *                   symbol tables (.symtab, .dynsym, SHT_SYMTAB_SHNDX) and
 *                   the string tables they link to; .gnu_debuglink,
 *                   .gnu_debugaltlink; .rela.plt (names of the PLT
 *                   stubs); a Go file's .gopclntab, with its .rodata,
 *                   .noptrdata and .data.rel.ro (inline trees,
 *                   moduledata, an unnamed table). What
 *                   every sampled module needs.
 *   ELFIMAGE_DWARF  the .debug_* / .zdebug_* sections libdw reads for
 *                   lines, inlines and scopes (not .debug_loc*, macros or
 *                   name indexes). A live module is opened without it:
 *                   DWARF is copied only when a line or an inline is first
 *                   asked for (debugfile.h: the file is its own debug
 *                   file), so a module no sample lands in costs its names
 *                   and CFI, not its DWARF.
 *   ELFIMAGE_CODE   executable sections: offline annotate disassembles
 *                   the file; the live paths read code from the target.
 *
 * Every other section keeps its header, address, size and flags but
 * becomes SHT_NOBITS, so section indices, st_shndx, sh_link and "is this
 * address in .plt" still hold. The image is laid out anew: ELF header,
 * program headers, note blobs, kept sections (each at its alignment, at
 * most 4096), then the section headers.
 *
 * What it costs (the price of never faulting): a mapping costs only the
 * pages read, a copy costs every byte copied. So a live module is copied
 * in steps (space.c): headers and notes when it is seen; names and CFI
 * when a sample first lands in it (elfimage_open_later, elfimage_fill:
 * for libLLVM-14, a 110 MB file, .dynsym, .dynstr, .eh_frame and
 * .eh_frame_hdr are about 10 MB, paid only if LLVM code is sampled);
 * DWARF whole when its lines are first wanted (libdw reads one CU of a
 * mapping; here all of .debug_info is resident: about 13 MB for a -g
 * libpython3.11). Nothing else of the file, ever.
 *
 * Cap: ELFIMAGE_MAX bytes per image (256 MiB). Past it, code is dropped
 * first, then DWARF (names and CFI remain; counted as dwarf_dropped);
 * when what is left still exceeds it the file gets no image (-EFBIG: a
 * module with no names, frame-pointer unwinding; no lines), never a
 * partial read. A section whose bytes cannot be read (a file truncated
 * below its section table, a read error) becomes SHT_NOBITS; a section
 * table that cannot be read leaves an image of headers and notes only.
 *
 * Only ELF files of the host's byte order are copied (a target on this
 * machine maps no other); 32- and 64-bit both.
 *
 * Contract: elfimage_open returns an Elf (opened with elf_memory over a
 * malloc'ed image the Elf does not own); elfimage_close ends it and frees
 * the image. Nothing keeps the fd. Thread safe; nothing prints. Counters
 * are process wide (atomic).
 */
#ifndef STACKTOP_ELFIMAGE_H
#define STACKTOP_ELFIMAGE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#define ELFIMAGE_MAX (256ull << 20)

enum {
	ELFIMAGE_NAMES = 1 << 0, /* notes, CFI, symbol tables, debuglink */
	ELFIMAGE_DWARF = 1 << 1, /* .debug_* for lines and inlines */
	ELFIMAGE_CODE = 1 << 2,	 /* executable sections */
};

struct elfimage_stats {
	uint64_t images;	/* images made */
	uint64_t bytes;		/* bytes copied into them (all time) */
	uint64_t short_reads;	/* sections or tables the file did not hold */
	uint64_t dwarf_dropped; /* images whose DWARF was over the cap */
	uint64_t refused;	/* files over the cap with names and CFI alone */
};

/* The compact image of fd's file (read with pread from offset 0; the
 * file's current size is the limit), opened with elf_memory. flags:
 * ELFIMAGE_* (0: headers, segment notes and section names only). cap: bytes (ELFIMAGE_MAX normally;
 * tests pass less). *out is NULL on error. 0, -ENOEXEC (not an ELF file of our byte order), -EFBIG
 * (over cap), -EIO (no header), -ENOMEM. */
int elfimage_open(int fd, unsigned flags, uint64_t cap, Elf **out);
/* Sections read later: elfimage_open with the tiers in later laid out in
 * the image (headers, offsets, sizes as the file says) but not read: their
 * bytes are zero, in fresh anonymous pages that cost no memory, until
 * elfimage_fill reads them. *pending is NULL when nothing was left for
 * later. Why: a module no sample lands in needs its headers only; its
 * names and CFI are read on first use (space_module_fill). */
struct elfimage_pending;
int elfimage_open_later(int fd, unsigned flags, unsigned later, uint64_t cap, Elf **out,
			struct elfimage_pending **pending);
/* Read the pending sections of e from fd (the same file, reopened; -1
 * when it cannot be): each that cannot be read (the file shrank, a read
 * error) becomes SHT_NOBITS, in the image's section table that libelf
 * reads in place. Call before anything reads those sections (their bytes
 * are zero until then: no names, no FDEs). Frees p. */
void elfimage_fill(Elf *e, struct elfimage_pending *p, int fd);
void elfimage_pending_free(struct elfimage_pending *p);
/* Decompress scn (SHF_COMPRESSED) of an image as elf_compress(scn, 0, 0)
 * does, then give back the pages its compressed bytes held in the image:
 * libelf keeps the inflated copy and never reads them again (libc's debug
 * file: ~3 MiB). 0 or elf_compress's failure (-EIO; scn stays compressed). */
int elfimage_inflate(Elf *e, Elf_Scn *scn);
/* elf_end, and free the image. NULL is ignored. */
void elfimage_close(Elf *e);
void elfimage_stats_get(struct elfimage_stats *out);

#endif
