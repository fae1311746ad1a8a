/*
 * symname — demangling, short names, clipping (symname.h).
 */
#include "stacktop/symbols/symname.h"

#include <ctype.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/lib/text.h"

/* ---- demangling -------------------------------------------------------- */

static bool is_hex_n(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* Rust legacy names end in "::h<16 hex>", a hash that only adds noise. */
static void strip_rust_hash(char *s)
{
	size_t len = strlen(s);

	if (len > 19 && !memcmp(s + len - 19, "::h", 3) && is_hex_n(s + len - 16, 16))
		s[len - 19] = '\0';
}

void symname_clip(char *s, bool cut)
{
	size_t len = strnlen(s, SYM_NAME_MAX), keep;

	if (!cut && len < SYM_NAME_MAX)
		return;
	keep = SYM_NAME_MAX - sizeof(SYM_NAME_CUT);
	if (keep > len)
		keep = len;
	/* Not in the middle of a UTF-8 sequence. */
	while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	memcpy(s + keep, SYM_NAME_CUT, sizeof(SYM_NAME_CUT));
}

const char *symname_demangle(const char *name, char *buf, size_t size)
{
	char *d;

	if (!name || !size || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d)
		return name;
	strip_rust_hash(d);
	snprintf(buf, size, "%s", d);
	free(d);
	return buf;
}

/* ---- short names ----------------------------------------------------------- */

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Past "operator" at s[i] and the operator's own characters ("()",
 * "<<=", "->", "[]"), so they are not read as brackets; i when s[i] does
 * not start the word operator. */
static size_t skip_operator(const char *s, size_t i)
{
	if (strncmp(s + i, "operator", 8) || ident_char(s[i + 8]) || (i && ident_char(s[i - 1])))
		return i;
	i += 8;
	if (!strncmp(s + i, "()", 2))
		return i + 2;
	while (s[i] && strchr("<>=!+-*/%&|^~[],", s[i]))
		i++;
	return i;
}

/* The '(' that opens the parameter list: the first at the top level
 * (outside <>, () and {}: "{lambda(int)#1}", "(anonymous namespace)")
 * right after a name, not after a space (" (inline)"); -1 if none. */
static long params_at(const char *s)
{
	int depth = 0;

	for (size_t i = 0; s[i]; i++) {
		size_t j = skip_operator(s, i);
		if (j != i) {
			i = j - 1;
			continue;
		}
		switch (s[i]) {
		case '<':
		case '{':
			depth++;
			break;
		case '>':
		case '}':
			depth -= depth > 0;
			break;
		case '(':
			/* not after '.': a Go receiver, "sync.(*Mutex).Lock" */
			if (!depth && i && s[i - 1] != ' ' && s[i - 1] != ':' && s[i - 1] != '.')
				return (long)i;
			depth++;
			break;
		case ')':
			depth -= depth > 0;
			break;
		}
	}
	return -1;
}

/* Where the name starts after a return type ("int ns::f<int>" → "ns::…"):
 * past the last top-level space not part of "operator new", "operator
 * int"; 0 when there is none. */
static size_t after_return_type(const char *s, size_t n)
{
	size_t start = 0;
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '<' || s[i] == '(' || s[i] == '{')
			depth++;
		else if (s[i] == '>' || s[i] == ')' || s[i] == '}')
			depth -= depth > 0;
		else if (s[i] == ' ' && !depth && !(i >= 8 && !strncmp(s + i - 8, "operator", 8)))
			start = i + 1;
	}
	return start < n ? start : 0;
}

const char *symname_short(const char *name, char *buf, size_t size)
{
	long p;
	size_t start, end;
	int depth = 0;
	const char *tail = "";

	if (!name || !size || (p = params_at(name)) < 0)
		return name;
	/* What follows the parameters: " const", " &&" go; a clone's
	 * "[clone .cold]" and the views' " (inline)" stay. */
	for (end = (size_t)p; name[end]; end++) {
		if (name[end] == '(')
			depth++;
		else if (name[end] == ')' && --depth == 0)
			break;
	}
	if (name[end]) {
		const char *clone = strstr(name + end, " [clone"),
			   *inl = strstr(name + end, " (inline)");
		tail = clone && (!inl || clone < inl) ? clone : inl ? inl : "";
	}
	start = after_return_type(name, (size_t)p);
	snprintf(buf, size, "%.*s%s", (int)((size_t)p - start), name + start, tail);
	return buf;
}
