/*
 * frames — the frames table of the symbolizer stage: every distinct frame a
 * sample has named, as a small dense id with its names.
 *
 * A frame is (pid, pc, kernel) for live samples, the wait kind for wall
 * mode's pseudo frames ("[lock]", "[I/O]", ...), or its names alone for a
 * saved profile (interned by content). Interning a user pc names it at once
 * (function, module: one binary search in the module's table); file:line is
 * looked up only when someone asks for it with frames_line, which is what
 * the views do for the frames they show, on the tick, never in draw.
 *
 * Lifetime: ids are stable while a frame is referenced. The window takes a
 * reference for each trie node that uses a frame and drops it when the node
 * ages out; an unreferenced frame may be reclaimed and its id reused, so
 * nobody may keep an id past the window's life of its stack (production
 * safety: memory follows the window's content, not the run time).
 *
 * Strings in struct sym_info are the table's: a named frame's live until
 * frames_free, a kernel frame's are sym's (until sym_free), and a live
 * user frame's (function, module, file, origin; ELF or JIT) are counted:
 * their bytes are reused once no frame holds them, so memory follows the
 * window's content even when a target dlopens library after library with
 * new names, and a copy of a frame kept past its id's life may show
 * another name, never freed memory. They are raw target text: the views
 * sanitize before drawing.
 */
#ifndef STACKTOP_FRAMES_H
#define STACKTOP_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacktop/sample/sample.h"
#include "stacktop/unwind/space.h"
#include "stacktop/symbols/sym.h"

/* What a frame's code is: native (ELF, JIT, kernel, wait) or a function
 * of an interpreted program, named by its runtime's reader (runtime/);
 * or no code at all: the root frame of a process's stacks in the
 * whole-machine mode (frames_process). */
enum frame_lang { FRAME_LANG_NATIVE = 0, FRAME_LANG_PYTHON = 1, FRAME_LANG_PROCESS = 2 };

struct frame {
	int pid;     /* 0 for named frames, -1 for wait pseudo frames; a process frame's pid */
	uint64_t pc; /* the kind, for wait frames */
	bool kernel;
	bool has_sym;  /* sym.func/module/offset filled in */
	bool has_line; /* file:line looked up (sym.file may still be NULL) */
	uint8_t wait;  /* 0, or the enum sample_wait of a wait pseudo frame */
	uint8_t lang;  /* enum frame_lang */
	struct sym_info sym;
	/* Where the code is, for annotating it (also from a saved profile):
	 * the module's path as the target sees it and its build-id (hex),
	 * the table's, and the pc as an ELF address. NULL/0 when unknown. */
	struct frame_origin {
		const char *path, *build_id;
		uint64_t elf_addr;
	} origin;
};

struct frames;

/* sy is borrowed and must outlive the table; NULL for a table that only
 * holds named frames (report). */
int frames_new(struct sym *sy, struct frames **out);
void frames_free(struct frames *fr);

/* A user pc of the process whose mappings are sp, named now (no line).
 * Returns the id, or -ENOMEM. */
int64_t frames_user(struct frames *fr, struct space *sp, uint64_t pc);
/* A user pc as its frames, innermost first: one per inlined level
 * (sym.inlined set, file:line known), then the frame of frames_user.
 * Writes at most max ids (the inline levels are cut first); returns how
 * many, or -ENOMEM. The chain is looked up once per pc (see frames.c). */
int frames_user_chain(struct frames *fr, struct space *sp, uint64_t pc, uint32_t *ids, int max);
/* A kernel pc, named from kallsyms. */
int64_t frames_kernel(struct frames *fr, int pid, uint64_t pc);
/* The pseudo frame of a wait kind; -EINVAL for SAMPLE_WAIT_NONE. */
int64_t frames_wait(struct frames *fr, enum sample_wait kind);
/* A frame known only by its names (a saved profile): interned by content
 * (kernel, module, function, file, line); the strings are copied. */
int64_t frames_named(struct frames *fr, const struct sym_info *si);
/* A function of an interpreted program (lang), named by its runtime's
 * reader: interned by content (lang, module, function, file, line) as
 * frames_named, but its strings are counted as a live user frame's, freed
 * with the last frame that uses them, so a program that makes up new
 * names cannot grow the table. si's strings are copied; file:line is
 * known (has_line). Returns the id, or -ENOMEM. */
int64_t frames_script(struct frames *fr, enum frame_lang lang, const struct sym_info *si);

/* The root frame of process pid's stacks (whole-machine mode): named
 * "COMM (PID)" (comm raw, cut at 64 bytes), module "[process]", lang
 * FRAME_LANG_PROCESS, pid set; interned by content like frames_script, so
 * a process that execs gets a new root under its new name. Returns the
 * id, or -ENOMEM. */
int64_t frames_process(struct frames *fr, int pid, const char *comm);
/* Is this a process root frame (frames_process)? */
static inline bool frame_is_process(const struct frame *f)
{
	return f && f->lang == FRAME_LANG_PROCESS;
}

/* The same with the code's origin (path, build-id, ELF address; copied),
 * which is then part of the frame's identity: a saved profile that kept
 * addresses has one frame per address. */
int64_t frames_named_at(struct frames *fr, const struct sym_info *si, const struct frame_origin *o);
/* A live frame (pid, pc, kernel) named with si as given rather than by
 * sym (file:line too when with_line, else left to look up, which finds
 * nothing); si NULL leaves it unnamed. The names are set on first sight
 * only; si's strings are borrowed and must outlive the table. For tests
 * and for callers that name frames themselves. */
int64_t frames_preset(struct frames *fr, int pid, uint64_t pc, bool kernel,
		      const struct sym_info *si, bool with_line);

/* The frame, or NULL for an id that is not live. */
const struct frame *frames_get(const struct frames *fr, uint32_t id);
/* One past the highest id ever handed out (for id-indexed arrays). */
size_t frames_span(const struct frames *fr);
/* The frame with its file:line looked up (once; cached on the frame). */
const struct frame *frames_line(struct frames *fr, uint32_t id);

/* After sym_fetched: name again the live frames that had no function
 * name, if sym's names changed since the last call. Returns how many got
 * one. */
int frames_renamed(struct frames *fr);

/* Is the live frame id anonymous executable code (a JIT's) that went
 * unnamed (no perf map held its pc when it was named)? */
bool frames_jit_unnamed(const struct frames *fr, uint32_t id);
/* A JIT's perf map came or grew (a JVM asked for it, or written at its
 * exit): the live frames of pid that frames_jit_unnamed are looked up
 * again with lookup (0 and out filled, its strings valid until its next
 * call; sym_perfmap_lookup fits) and named when it finds them. Returns
 * how many got a name. */
typedef int frames_jit_lookup_fn(void *ctx, uint64_t pc, struct sym_info *out);
int frames_rename_jit(struct frames *fr, int pid, frames_jit_lookup_fn *lookup, void *ctx);

/* References held by the window's trie nodes (see the head of this file). */
void frames_ref(struct frames *fr, uint32_t id);
void frames_unref(struct frames *fr, uint32_t id);
/* Frames live now (for the header and the memory bench). */
size_t frames_live(const struct frames *fr);
/* Distinct strings the live user frames hold (counted: freed with the
 * last frame that uses one, so they follow the window's content). */
size_t frames_names(const struct frames *fr);

#endif
