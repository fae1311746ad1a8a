/*
 * sbuf — a growable byte buffer for text and binary output (the profile
 * writers build whole files in one).
 *
 * Contract: zero-initialise a struct sbuf; append with sbuf_add, sbuf_str
 * or sbuf_printf. The bytes are p[0 .. n), always followed by a '\0' once
 * anything was added. A failed allocation sets oom, which sticks: later
 * appends do nothing, so a writer appends freely and checks oom once at
 * the end. The caller owns p and frees it (free(b.p)).
 */
#ifndef STACKTOP_SBUF_H
#define STACKTOP_SBUF_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

void sbuf_add(struct sbuf *b, const char *s, size_t n);
void sbuf_str(struct sbuf *b, const char *s);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
