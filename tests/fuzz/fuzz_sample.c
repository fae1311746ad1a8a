/* Fuzz entry point: a perf ring record (PERF_RECORD_SAMPLE payload as the
 * kernel lays it out), decoded with and without a callchain. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/sample/perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Records are 8-byte aligned in the ring: keep that here. */
	uint64_t *rec = malloc(size + 8);
	struct sample s;
	memcpy(rec, data, size);
	for (int cc = 0; cc < 2; cc++) {
		if (perf_parse_sample(rec, size, cc, &s) == 0) {
			if ((const uint8_t *)s.stack + s.stack_size > (const uint8_t *)rec + size && s.stack)
				abort(); /* stack copy must lie inside the record */
			if (s.nkpcs < 0)
				abort();
		}
	}
	free(rec);
	return 0;
}
