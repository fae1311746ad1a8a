/* Fuzz entry point: /proc/kallsyms text, then lookups in what was parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/symbols/sym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym *sy;
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	if (sym_new(&sy) == 0) {
		if (sym_kallsyms_parse(sy, text) == 0) {
			struct sym_info si;
			uint64_t probes[] = {0, 1, 0xffffffff81000000ull, UINT64_MAX};
			for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
				sym_resolve_kernel(sy, probes[i], &si);
		}
		sym_free(sy);
	}
	free(text);
	return 0;
}
