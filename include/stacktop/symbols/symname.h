/*
 * symname — a symbol's name made fit to show: demangled (C++ through
 * libiberty, Rust with its hash dropped), shortened to what the views show
 * by default (no return type, no parameters), and cut to SYM_NAME_MAX
 * without splitting a UTF-8 sequence. Strings only: no tables, no ELF, no
 * state; every function writes into the caller's buffer.
 */
#ifndef STACKTOP_SYMNAME_H
#define STACKTOP_SYMNAME_H

#include <stdbool.h>
#include <stddef.h>

/* Demangle a C++ or Rust symbol into buf; returns buf, or name unchanged
 * when it is not mangled. SYM_DEMANGLE_MAX bytes hold any name we show.
 * Also used by srcline (DWARF names) and for perf map names. */
#define SYM_DEMANGLE_MAX 4096
const char *symname_demangle(const char *name, char *buf, size_t size);
/* A demangled C++ name without its return type and parameters, as the
 * views show it by default: "int app::Matrix<int>::sum(int) const" →
 * "app::Matrix<int>::sum" (template arguments stay: they tell
 * instantiations apart); " [clone .cold]" and " (inline)" are kept. Into
 * buf, which is returned; name itself when it has no parameter list (C,
 * Rust, Go names). */
const char *symname_short(const char *name, char *buf, size_t size);

/* Longest name sym hands out, with its NUL (perf keeps a few KiB). */
#define SYM_NAME_MAX 1024
#define SYM_NAME_CUT "..."
/* Cut s (a buffer of at least SYM_NAME_MAX bytes) to SYM_NAME_MAX bytes
 * ending in SYM_NAME_CUT when it is longer, or when cut says it was
 * already cut short (the mark is then added), never inside a UTF-8
 * sequence. */
void symname_clip(char *s, bool cut);

#endif
