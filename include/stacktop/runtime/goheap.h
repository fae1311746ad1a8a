/*
 * goheap — a Go program's own heap figures, read from its memory: no
 * attach, no code in the target, nothing the program must enable.
 *
 * Where: the runtime's globals runtime.gcController and runtime.memstats,
 * found by name in the executable's .symtab; the offsets of their members
 * from the executable's DWARF (the structs runtime.gcControllerState and
 * runtime.mstats), because those structs change between Go versions (1.19
 * and 1.20 keep heapInUse and heapFree in gcController, 1.21 and later in
 * memstats): each figure is looked for by its member name in both. A
 * stripped binary (-ldflags="-s -w": no .symtab, no DWARF) has none of
 * this: -ENODATA, so the caller can say why.
 *
 * What is read (what runtime.ReadMemStats builds on): used =
 * gcController.heapLive (bytes the GC counts live: marked at the last
 * cycle plus allocated since, about HeapAlloc); committed = heapInUse +
 * heapFree (HeapSys less what was returned to the OS: the heap's part of
 * the RSS); collections = memstats.numgc; their stop-the-world pauses =
 * memstats.pause_total_ns.
 *
 * Hostile memory: the executable is the target's (opened through tfile
 * as /proc/PID/exe the way space opens a mapped file: TFILE_ELF_MAX at
 * most, copied by elfimage); its DWARF only
 * gives offsets, each checked to lie inside its struct and the struct
 * inside the variable's symbol. The figures are read with one
 * process_vm_readv of a few words and kept only when sane (committed
 * under 1 PiB, used not above committed): else -EAGAIN, never a wrong
 * figure. The program runs while it is read, so the words are not of
 * one instant; a second's figures are close enough for a MEM line.
 *
 * Contract: goheap_open reads the executable once (its section names,
 * then for a Go program its symbols and DWARF; then closes it: a program
 * that is not Go costs its headers, so it may be asked again) and keeps
 * only addresses; goheap_read reads the target
 * each call; goheap_free frees. Nothing prints.
 */
#ifndef STACKTOP_GOHEAP_H
#define STACKTOP_GOHEAP_H

#include <gelf.h>
#include <stdint.h>
#include <sys/types.h>

/* The addresses of the words read (as loaded: the bias added); 0: none. */
struct goheap_where {
	uint64_t live, inuse, free, numgc, pause_ns;
};

struct goheap_figures {
	uint64_t heap_used, heap_committed; /* bytes */
	uint64_t gc_count;		    /* completed collections */
	double gc_pause_s;		    /* their stop-the-world pauses */
};

struct goheap;

/* Find the words in a Go executable's image e (elfimage with
 * ELFIMAGE_NAMES | ELFIMAGE_DWARF), loaded with bias. 0, -ENOENT (not a
 * Go program: no .gopclntab section), -ENODATA (Go, but stripped: no
 * runtime.memstats symbol or no DWARF for it), -EINVAL (the DWARF does not
 * describe the members as expected). */
int goheap_find(Elf *e, uint64_t bias, struct goheap_where *out);

/* Open live process pid's executable and find the words (the bias from
 * /proc/PID/maps for a PIE). 0 or as goheap_find, or -errno of the
 * open. */
int goheap_open(pid_t pid, struct goheap **out);
int goheap_read(struct goheap *g, struct goheap_figures *out);
void goheap_free(struct goheap *g);

#endif
