/*
 * text — safe strings and human-readable numbers.
 *
 * Everything that comes from the target (symbol names, thread names, command
 * lines, paths) passes through text_sanitize before it is drawn: control
 * characters and invalid UTF-8 become '?'. The formatters write units so no
 * number on screen is bare.
 */
#ifndef STACKTOP_TEXT_H
#define STACKTOP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copy in into out (size bytes, always NUL-terminated), replacing control
 * characters and invalid UTF-8 with '?'. Returns the length written. */
size_t text_sanitize(const char *in, char *out, size_t size);
/* Display width in columns of valid UTF-8 text (wcwidth per code point). */
int text_width(const char *utf8);

/* "35.0s", "1.2ms", "4m05s", "2h10m": a duration in nanoseconds. */
void text_duration(uint64_t ns, char *out, size_t size);
/* "812 MiB", "2.0 GiB", "740 KiB": a size in bytes. */
void text_bytes(uint64_t bytes, char *out, size_t size);
/* "35,412": thousands separators. */
void text_count(uint64_t n, char *out, size_t size);

/* ---- lower-level helpers (shared with grid and the views) ---- */

/* Decode one UTF-8 sequence at s (locale independent). Returns its length
 * (1..4) with *cp set, 0 at the terminating NUL, or -1 when the bytes at s
 * are not valid UTF-8 (overlong, surrogate, > U+10FFFF, truncated, stray
 * continuation): the caller shows '?' and skips one byte. */
int text_utf8_decode(const char *s, uint32_t *cp);
/* Encode cp (must be valid) into out; returns 1..4. */
int text_utf8_encode(uint32_t cp, char out[4]);
/* True for code points that must never reach a terminal raw: C0, DEL, C1,
 * and the bidi overrides/isolates and line/paragraph separators (they can
 * reorder or break what is drawn around them). */
bool text_is_control(uint32_t cp);
/* Columns a printable code point takes: wcwidth, with -1 (unknown in this
 * locale) counted as 1. */
int text_cp_width(uint32_t cp);
/* "0.0s" .. "59.9s", then like text_duration ("1m05s", "2h10m"): times in
 * the top view, where sub-second values should stay in seconds. */
void text_seconds(double s, char *out, size_t size);
/* The same in whole seconds: "12s" under a minute, then "4m05s", "2h10m"
 * (how long something has lasted: stuck in D, a zombie). */
void text_span(double s, char *out, size_t size);
/* Sanitize in into out and cut it to at most width columns; when it had to
 * be cut, the last column is "…". Returns the width of out. */
int text_fit(const char *in, int width, char *out, size_t size);

/* The part of path after its last '/' (path itself when it has none or
 * ends in '/'; NULL for NULL). Points into path. */
const char *text_basename(const char *path);

/* printf into err (errsz bytes, always terminated) the one sentence a
 * failing call hands back to main; nothing when err is NULL or errsz 0. */
void text_errf(char *err, size_t errsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* True when the current locale's charset is UTF-8 (after setlocale). */
bool text_locale_utf8(void);

#endif
