/*
 * text — safe strings and human-readable numbers.
 *
 * Owns the one UTF-8 decoder the views use. It is hand-written rather than
 * mbrtowc because mbrtowc follows LC_CTYPE: under the C locale it would call
 * every non-ASCII byte invalid, and under a legacy locale it would accept
 * sequences that are not UTF-8. The decoder rejects what RFC 3629 forbids:
 * overlong forms, UTF-16 surrogates (U+D800..DFFF) and anything past
 * U+10FFFF. Widths still come from wcwidth (the screen sets the locale);
 * where it answers -1 we count one column, which is what a '?' would take.
 *
 * Everything here writes into caller buffers and always NUL-terminates;
 * nothing allocates.
 */
#include <langinfo.h>
#include <strings.h>

#include "stacktop/lib/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

static int cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

int text_utf8_decode(const char *str, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c, min;
	int len, i;

	if (s[0] == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return -1; /* stray continuation, C0/C1 overlong lead, F5..FF */
	}
	/* A NUL is not a continuation byte, so this never reads past it. */
	for (i = 1; i < len; i++) {
		if (!cont(s[i]))
			return -1;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*cp = c;
	return len;
}

int text_utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

bool text_is_control(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return true;
	/* Bidi embeddings/overrides/isolates ("Trojan Source", CVE-2021-42574),
	 * the implicit direction marks (LRM, RLM, ALM: they too reorder what
	 * follows them) and the Unicode line separators. */
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
	       cp == 0x200f || cp == 0x061c || cp == 0x2028 || cp == 0x2029;
}

int text_cp_width(uint32_t cp)
{
	int w = wcwidth((wchar_t)cp);

	return w < 0 ? 1 : w;
}

size_t text_sanitize(const char *in, char *out, size_t size)
{
	size_t o = 0;
	uint32_t cp;
	int len;

	if (size == 0)
		return 0;
	if (!in)
		in = "";
	while ((len = text_utf8_decode(in, &cp)) != 0) {
		if (len < 0 || text_is_control(cp)) {
			/* One '?' per bad byte, or per valid control code point. */
			if (o + 1 >= size)
				break;
			out[o++] = '?';
			in += len < 0 ? 1 : len;
			continue;
		}
		/* Stop before a sequence that does not fit whole. */
		if (o + (size_t)len >= size)
			break;
		memcpy(out + o, in, (size_t)len);
		o += (size_t)len;
		in += len;
	}
	out[o] = 0;
	return o;
}

int text_width(const char *utf8)
{
	uint32_t cp;
	int len, w = 0;

	if (!utf8)
		return 0;
	while ((len = text_utf8_decode(utf8, &cp)) != 0) {
		if (len < 0 || text_is_control(cp)) {
			w++; /* drawn as '?' */
			utf8 += len < 0 ? 1 : len;
			continue;
		}
		w += text_cp_width(cp);
		utf8 += len;
	}
	return w;
}

int text_fit(const char *in, int width, char *out, size_t size)
{
	static const char ell[] = "\u2026";
	size_t o = 0;
	uint32_t cp;
	int len, w = 0, cw;

	if (size == 0)
		return 0;
	out[0] = 0;
	if (width <= 0)
		return 0;
	text_sanitize(in, out, size);
	if (text_width(out) <= width)
		return text_width(out);
	/* Keep whole code points up to width - 1 columns, then the ellipsis. */
	while ((len = text_utf8_decode(out + o, &cp)) > 0) {
		cw = text_cp_width(cp);
		if (w + cw > width - 1 || o + (size_t)len + sizeof(ell) > size)
			break;
		w += cw;
		o += (size_t)len;
	}
	if (o + sizeof(ell) <= size) {
		memcpy(out + o, ell, sizeof(ell));
		w++;
	} else {
		out[o] = 0;
	}
	return w;
}

void text_duration(uint64_t ns, char *out, size_t size)
{
	uint64_t t, s, m;

	if (ns < 1000) {
		snprintf(out, size, "%lluns", (unsigned long long)ns);
	} else if (ns < 999950) {
		t = (ns + 50) / 100; /* tenths of a microsecond */
		snprintf(out, size, "%llu.%lluus", (unsigned long long)(t / 10),
			 (unsigned long long)(t % 10));
	} else if (ns < 999950000ull) {
		t = (ns + 50000) / 100000; /* tenths of a millisecond */
		snprintf(out, size, "%llu.%llums", (unsigned long long)(t / 10),
			 (unsigned long long)(t % 10));
	} else if (ns < 59950000000ull) {
		t = (ns + 50000000) / 100000000; /* tenths of a second */
		snprintf(out, size, "%llu.%llus", (unsigned long long)(t / 10),
			 (unsigned long long)(t % 10));
	} else if ((s = (ns + 500000000) / 1000000000) < 3600) {
		snprintf(out, size, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	} else if ((m = (s + 30) / 60) < 100 * 60) {
		snprintf(out, size, "%lluh%02llum", (unsigned long long)(m / 60),
			 (unsigned long long)(m % 60));
	} else {
		t = (m + 30) / 60; /* hours */
		snprintf(out, size, "%llud%02lluh", (unsigned long long)(t / 24),
			 (unsigned long long)(t % 24));
	}
}

/* s as "<s>s" with decimals below the minute (whole seconds: rounded
 * up to the minute at 59.5), else text_duration. */
static void seconds_text(double s, int decimals, char *out, size_t size)
{
	if (!(s > 0)) /* also NaN */
		s = 0;
	if (s < (decimals ? 59.95 : 59.5)) {
		snprintf(out, size, "%.*fs", decimals, s);
		return;
	}
	if (s > 1e9)
		s = 1e9;
	text_duration((uint64_t)(s * 1e9), out, size);
}

void text_seconds(double s, char *out, size_t size)
{
	seconds_text(s, 1, out, size);
}

void text_span(double s, char *out, size_t size)
{
	seconds_text(s, 0, out, size);
}

void text_bytes(uint64_t bytes, char *out, size_t size)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(out, size, "%llu B", (unsigned long long)bytes);
		return;
	}
	while (u < 5 && v >= 1024) {
		v /= 1024;
		u++;
	}
	/* Three significant figures at most, the way people read sizes:
	 * "2.0 GiB", "812 MiB"; 1023.9 rounds up into the next unit. */
	if (v < 9.95) {
		snprintf(out, size, "%.1f %s", v, units[u]);
	} else if (v < 1023.5 || u == 5) {
		snprintf(out, size, "%.0f %s", v, units[u]);
	} else {
		snprintf(out, size, "1.0 %s", units[u + 1]);
	}
}

void text_count(uint64_t n, char *out, size_t size)
{
	char digits[24], buf[32];
	int nd, i, o = 0;

	nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	for (i = 0; i < nd; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	snprintf(out, size, "%s", buf);
}

bool text_locale_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
}

void text_errf(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

const char *text_basename(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s && s[1] ? s + 1 : path;
}
