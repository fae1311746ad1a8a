/*
 * sym — addresses → names: function, module, file:line. The public face of
 * symbols/: the other modules there answer one question each, sym puts
 * their answers into a struct sym_info.
 *
 * For each module (struct module from space), one sorted table of function
 * symbols is built on first use from .symtab, falling back to .dynsym for
 * stripped files, and also from a separate debug file (debugfile.h: by
 * build-id or .gnu_debuglink). Lookups are a binary search. A pc no symbol
 * covers is named by the function range (elf/fde.h) of
 * .eh_frame/.debug_frame that holds it: "prog!0x12b0", the FDE's start as
 * a file offset, so a stripped function is still one function; a pc in a
 * PLT stub is "[plt]". file:line comes from DWARF (srcline.h) on request
 * and is cached per address, together with the chain of inlined functions
 * at that address. C++ and Rust names are demangled (libiberty), with Rust
 * hashes dropped.
 *
 * A Go binary without .symtab (`go build -ldflags="-s -w"`) is named from
 * its .gopclntab (elf/gopclntab.h): functions, file:line and Go's inline
 * tree, the way Go's own tracebacks name it.
 *
 * JIT code: the target's perf map file (perfmap.h), else the jitdump file
 * it maps (jitdump.h), whose names carry file:line. Kernel: /proc/kallsyms
 * (kallsyms.h), loaded once; all-zero addresses (no permission) make every
 * kernel address "[kernel]" with no name.
 *
 * Strings returned are owned by sym. A kernel name lives until sym_free;
 * every user-space name (function, module, file, inline levels, JIT
 * names) lives only until the next call into sym, and a caller that keeps
 * it copies it: a target that dlopens library after library, each with
 * new names, must not grow sym (frames holds counted copies, so names
 * follow the window's content). They are raw (not sanitized): the
 * views sanitize before drawing. No name is longer than SYM_NAME_MAX
 * bytes with its NUL: a longer one (a target's choice) is cut and ends in
 * SYM_NAME_CUT.
 *
 * A module's table costs memory in proportion to its symbol count, never
 * to the length of names (they stay offsets into the file's string
 * section until shown); a table that could not be built (out of memory) is
 * kept empty, and not built again for each new pc.
 */
#ifndef STACKTOP_SYM_H
#define STACKTOP_SYM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacktop/symbols/symname.h"
#include "stacktop/unwind/space.h"

struct sym;

struct sym_info {
	const char *func;   /* demangled name; NULL when unknown */
	const char *module; /* module basename, "[kernel]", "[jit]" (perf map), "[unknown]" */
	/* pc - function start; when func is NULL, the file offset
	 * (pc - mapping start + pgoff), or pc itself without a mapping. */
	uint64_t offset;
	uint64_t func_start; /* runtime address of the function (identity of the function), 0 if
				unknown */
	uint64_t func_size;  /* bytes from func_start the function covers (symbol size, FDE, perf
				map); 0 if unknown */
	const char *file; /* source file (basename), NULL when unknown; only if lines requested */
	int line;	  /* 0 when unknown */
	bool kernel;
	bool jit;
	bool inlined;  /* an inlined function: pc lies in code inlined into the next frame out */
	bool by_range; /* func is "module!0xSTART" from an FDE: a debug file may name it later */
};

/* Where a module's names came from (bits: one module may use several). */
enum {
	SYM_SRC_SYMTAB = 1 << 0,  /* the file's own .symtab */
	SYM_SRC_DEBUG = 1 << 1,	  /* .symtab of a separate debug file */
	SYM_SRC_DYNSYM = 1 << 2,  /* .dynsym only: a stripped file */
	SYM_SRC_FDE = 1 << 3,	  /* unnamed functions told apart by eh_frame ranges */
	SYM_SRC_PERFMAP = 1 << 4, /* a JIT's perf map */
	SYM_SRC_INLINE = 1 << 5,  /* DWARF named inlined functions */
	SYM_SRC_NONE = 1 << 6,	  /* some pcs had no name at all (offsets only) */
	SYM_SRC_REMOTE = 1 << 7,  /* file not read: on a FUSE or network mount (space.h) */
	SYM_SRC_JITDUMP = 1 << 8, /* a JIT's jitdump file (jitdump.h) */
	/* Go's own function table (elf/gopclntab.h): names, lines, inlines
	 * of a Go binary without .symtab (1 << 12: clear of other new bits) */
	SYM_SRC_GOPCLNTAB = 1 << 12,
};

/* A module sym has named pcs in, for the help page. */
struct sym_module_note {
	const char *name; /* module basename, "[jit]", "[anon]" */
	unsigned sources; /* SYM_SRC_* bits seen */
};

/* Up to SYM_INLINE_MAX inlined levels are expanded per pc. */
#define SYM_INLINE_MAX 8

int sym_new(struct sym **out);
void sym_free(struct sym *sy);

/* debuginfod (opt-in): modules without symbols of their own or a local
 * debug file are asked for from f (borrowed; NULL: never). */
struct dbgfetch;
void sym_set_fetch(struct sym *sy, struct dbgfetch *f);
/* Take the debug files that arrived and rebuild their modules' tables;
 * returns how many arrived. Call on the tick. */
int sym_fetched(struct sym *sy);
/* Changes whenever a module's names improved (a fetched debug file):
 * frames re-names what it named before. */
unsigned sym_names_gen(const struct sym *sy);
/* True when a fetcher is set: unnamed frames should keep what renaming
 * them needs. */
bool sym_names_may_change(const struct sym *sy);

/* Resolve a user-space pc of process s->pid. want_line asks for file:line
 * (slower the first time, then cached). 0 or -errno; an address with no
 * symbol still returns 0 with func NULL and module/offset set. */
int sym_resolve_user(struct sym *sy, struct space *s, uint64_t pc, bool want_line,
		     struct sym_info *out);
/* The inline chain at a user pc: out[0] is the innermost inlined
 * function, out[n-1] the outermost one, inlined into the function that
 * sym_resolve_user names. Each has inlined set and file:line where that
 * level is now: out[0] the pc's own line, out[i] the call of out[i-1].
 * *n = 0 when the pc is in no inlined code or the module has no DWARF.
 * Computed once per (module, address) and cached; the strings live until
 * the next call into sym. With a chain, sym_resolve_user's own line (want_line) is the
 * call of out[n-1], the line in the function it names. */
int sym_inline_user(struct sym *sy, struct space *s, uint64_t pc, struct sym_info *out, int max,
		    int *n);
/* The same by ELF address (see sym_resolve_module). */
int sym_inline_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
		      struct sym_info *out, int max, int *n);

/* The modules named so far, in the order first seen, with their sources. */
size_t sym_modules(const struct sym *sy, const struct sym_module_note **out);

/* The full path DWARF gives for the source file called base (a basename
 * as in sym_info.file) of the compile unit holding user pc: written to buf
 * (raw target text). 0, or -ENOENT when the module has no such file. */
int sym_source_path_user(struct sym *sy, struct space *s, uint64_t pc, const char *base, char *buf,
			 size_t size);
/* The same by ELF address in mod (root as in sym_resolve_module). */
int sym_source_path_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
			   const char *base, char *buf, size_t size);
/* Resolve a kernel address. */
int sym_resolve_kernel(struct sym *sy, uint64_t pc, struct sym_info *out);

/* Look up pc in the target's perf map (JIT code). 0 and out filled, or
 * -ENOENT. sym_resolve_user already falls back to this for pcs outside any
 * file mapping. */
int sym_perfmap_lookup(struct sym *sy, pid_t pid, uint64_t pc, struct sym_info *out);
/* The same in the map ROOT/tmp/perf-NSPID.map, trusted when owned by uid
 * or root (perfmap_lookup_at): for a process gone, whose root was kept
 * open ("/proc/self/fd/N"). */
int sym_perfmap_lookup_at(struct sym *sy, const char *root, pid_t nspid, uid_t uid, uint64_t pc,
			  struct sym_info *out);
/* Anonymous executable code (a JIT's) was met in a process with no trusted
 * perf map: the pid its /tmp/perf-PID.map would carry (its namespace pid);
 * 0 when none (or the map has come since). */
pid_t sym_jit_nomap(const struct sym *sy);

/* Resolve an address in the ELF's own address space (pc - mapping bias)
 * inside mod. root is the directory debug files are looked up under: NULL
 * or "" for our own file system, "/proc/PID/root" for a live process (used
 * the first time mod is seen; the table is then kept on the module). On a
 * hit func_start is the ELF address of the function; without a symbol,
 * offset is elf_addr. sym_resolve_user is this plus the mapping. */
int sym_resolve_module(struct sym *sy, struct module *mod, const char *root, uint64_t elf_addr,
		       bool want_line, struct sym_info *out);

#endif
