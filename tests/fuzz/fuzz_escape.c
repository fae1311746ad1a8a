/* Fuzz entry point: the output escapers (text_sanitize, text_fit, and
 * dump_json_string). Property: whatever the input, what leaves them is
 * valid UTF-8 with no C0 or C1 control, no DEL, and no bidi override or
 * isolate (U+202A..U+202E, U+2066..U+2069): nothing from a target can move
 * the cursor, recolour the terminal or reorder what is shown. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/app/dump.h"
#include "stacktop/lib/text.h"

static int forbidden(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

/* Abort unless s (n bytes) is valid UTF-8 without a forbidden code point. */
static void check_clean(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		uint32_t cp;
		int len;
		if (*p < 0x80) {
			cp = *p;
			len = 1;
		} else if ((*p & 0xe0) == 0xc0) {
			cp = *p & 0x1f;
			len = 2;
		} else if ((*p & 0xf0) == 0xe0) {
			cp = *p & 0x0f;
			len = 3;
		} else if ((*p & 0xf8) == 0xf0) {
			cp = *p & 0x07;
			len = 4;
		} else {
			abort(); /* not a lead byte */
		}
		if (end - p < len)
			abort(); /* cut sequence */
		for (int i = 1; i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				abort();
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (forbidden(cp))
			abort();
		p += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = {1, 2, 3, 5, 16, 64, 4096};
	static const int widths[] = {1, 2, 7, 40};
	char *in = fuzz_text(data, size), *json = NULL;
	size_t jlen = 0;
	FILE *f;

	if (!in)
		return 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *out = malloc(sizes[i]);
		size_t n = text_sanitize(in, out, sizes[i]);
		if (n >= sizes[i] || strlen(out) != n)
			abort();
		check_clean(out, n);
		free(out);
	}
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		char out[512];
		if (text_fit(in, widths[i], out, sizeof(out)) >= 0)
			check_clean(out, strlen(out));
	}
	/* JSON: escapes are ASCII text; the raw bytes must be clean too. */
	if ((f = open_memstream(&json, &jlen))) {
		dump_json_string(f, in);
		fclose(f);
		if (jlen < 2 || json[0] != '"' || json[jlen - 1] != '"')
			abort();
		check_clean(json, jlen);
		free(json);
	}
	free(in);
	return 0;
}
