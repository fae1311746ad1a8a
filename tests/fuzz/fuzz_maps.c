/* Fuzz entry point: /proc/PID/maps text (space_parse_maps). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/unwind/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct mapping *m = NULL;
	size_t n = 0;

	if (!text)
		return 0;
	if (space_parse_maps(text, &m, &n) == 0) {
		for (size_t i = 1; i < n; i++)
			if (m[i].start < m[i - 1].start)
				abort(); /* the contract: sorted */
		space_free_mappings(m, n);
	}
	free(text);
	return 0;
}
