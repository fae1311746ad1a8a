/* Fuzz entry point: perf map lines (JIT symbol files written by the target,
 * so hostile input by definition). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *save = NULL;

	if (!text)
		return 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t start, len;
		const char *name;
		if (perfmap_parse_line(line, &start, &len, &name) == 0 && (!name || !*name))
			abort(); /* accepted lines have a name */
	}
	free(text);
	return 0;
}
