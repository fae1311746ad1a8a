/*
 * space — a target process's address space: its mappings and the ELF files
 * behind them.
 *
 * space_parse_maps is a pure parser of /proc/PID/maps text. space_load reads
 * the maps of a live process and opens each file-backed executable mapping's
 * ELF through the target's own view of the file system
 * (/proc/PID/map_files/START-END, then /proc/PID/root/PATH), so containers and
 * deleted-then-replaced binaries work; every file is opened through tfile
 * (regular files only, never blocking, size-capped); a file on a FUSE or
 * network mount of the target is not opened at all (module->remote). A
 * module keeps no file descriptor and no mapping: its ELF is a compact
 * in-memory copy of what stacktop reads (elf/elfimage.h), so a file the
 * target truncates later cannot fault us. ELF files are shared between
 * spaces
 * through a process-wide module cache keyed by (device, inode) and, when the
 * file is gone, by path; modules are reference counted.
 *
 * A mapping translates a runtime address to the module's ELF virtual address
 * (the address space of its symbol table and CFI): elf_addr = pc - bias.
 * Other modules (unwind, sym) hang per-module caches off struct module
 * through the ext slots; each slot has a destructor called when the module
 * is freed.
 *
 * space->generation changes whenever a (re)load finds the executable
 * mappings changed (and on the first load and on release), so caches keyed
 * by code address can tell they are stale; a reload that finds the same
 * executable mappings keeps it (and the modules) as they were.
 */
#ifndef STACKTOP_SPACE_H
#define STACKTOP_SPACE_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum space_ext { SPACE_EXT_UNWIND = 0, SPACE_EXT_SYM, SPACE_EXT_LUNWIND, SPACE_EXT_COUNT };

struct module {
	char *path;	  /* as the target sees it, e.g. /usr/lib/x86_64-linux-gnu/libc.so.6 */
	const char *name; /* basename of path, for display */
	dev_t dev;
	ino_t ino;
	Elf *elf;    /* NULL when not an ELF we can read; an in-memory copy (elfimage) */
	bool remote; /* not opened: on a FUSE or network mount (elf is NULL) */
	/* /proc/PID/map_files/START-END it was first read through (the file
	 * even when deleted, while that process maps it), or NULL: where
	 * debugfile reads its DWARF later. */
	char *reopen;
	/* Names and CFI still to be read (space_module_fill); false for a
	 * module read whole, or one space did not make (a test's). */
	bool fill_later;
	uint16_t e_type; /* ET_EXEC, ET_DYN */
	uint8_t build_id[20];
	size_t build_id_len;
	int refs;
	void *ext[SPACE_EXT_COUNT];
	void (*ext_free[SPACE_EXT_COUNT])(void *);
};

/* One line of /proc/PID/maps. */
struct mapping {
	uint64_t start, end, pgoff;
	unsigned prot; /* PROT_READ|PROT_WRITE|PROT_EXEC */
	unsigned dev_major, dev_minor;
	uint64_t ino;
	char *path; /* NULL for anonymous; "[vdso]", "[heap]", "/x (deleted)" as in the file */
	struct module *mod; /* set by space_load for executable file mappings */
	uint64_t bias;	    /* elf_addr = pc - bias, valid when mod != NULL */
};

struct space {
	pid_t pid;
	unsigned generation;
	struct mapping *maps; /* sorted by start, non-overlapping */
	size_t nmaps;
};

/* Parse maps text into a new array (caller frees with space_free_mappings).
 * Malformed lines are skipped. Returns 0 or -errno. */
int space_parse_maps(const char *text, struct mapping **out, size_t *n);
void space_free_mappings(struct mapping *m, size_t n);

/* (Re)load /proc/PID/maps and open modules. s must be zeroed before the
 * first call. Bumps generation when the executable mappings changed. 0 or
 * -errno (-ESRCH: the process is gone; s is then left as it was). */
int space_load(struct space *s, pid_t pid);
void space_release(struct space *s);

/* The mapping that contains pc, or NULL. Binary search. */
const struct mapping *space_find(const struct space *s, uint64_t pc);

/* Module cache, shared by all spaces. Open an ELF by path (used for tests and
 * for files found outside a live process: offline annotate), its code
 * copied too. The returned module holds one reference. */
int space_module_open_path(const char *path, struct module **out);
/* One more reference on m (under the cache lock), dropped with
 * space_module_put: for holders that outlive the space (frames). */
void space_module_get(struct module *m);
/* Read m's names and CFI now if they are not yet (a live module is made
 * with its headers only, elf/elfimage.h): the file is reopened (the
 * map_files link it was read through, else its path under the target's
 * root; the same device and inode only). Call before reading m->elf's
 * symbol tables or CFI (unwind, lunwind, sym do, once per module); until
 * then their bytes are zero. A file that cannot be read again leaves
 * those sections SHT_NOBITS: no names, frame-pointer unwinding. Thread
 * safe; idempotent. */
void space_module_fill(struct module *m);
void space_module_put(struct module *m);

#endif
