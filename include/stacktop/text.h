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

#endif
