/* Fuzz entry point: /proc/kallsyms text, then lookups in what was parsed:
 * a hit lies in its symbol's range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzztext.h"

#include "stacktop/symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *k;
	char *text = fuzz_text(data, size);

	if (!text)
		return 0;
	if (kallsyms_new(&k) == 0) {
		if (kallsyms_parse(k, text) == 0) {
			struct kallsyms_sym ks;
			uint64_t probes[] = {0, 1, 0xffffffff81000000ull, UINT64_MAX};
			for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
				if (kallsyms_lookup(k, probes[i], &ks) == 0 &&
				    (probes[i] < ks.start || probes[i] >= ks.end || !ks.name[0]))
					abort();
		}
		kallsyms_free(k);
	}
	free(text);
	return 0;
}
