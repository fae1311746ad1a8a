/* fuzztext: the fuzz input as a C string. Most parsers take NUL-terminated
 * text while the fuzzer hands over bytes: fuzz_text() returns a malloc'd
 * copy of data[0..size) with a NUL after it (NULL when out of memory);
 * the caller frees it. */
#ifndef STACKTOP_FUZZ_FUZZTEXT_H
#define STACKTOP_FUZZ_FUZZTEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return NULL;
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

#endif
