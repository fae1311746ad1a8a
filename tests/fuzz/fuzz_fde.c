/* Fuzz entry point: .eh_frame and .debug_frame sections, parsed into
 * function ranges (fde_parse). The bytes come from the target's files,
 * so hostile input by definition. The first byte picks the section kind
 * (even: .eh_frame, odd: .debug_frame); ranges must come back sorted and
 * non-empty. */
#include <stdint.h>
#include <stdlib.h>

#include "stacktop/elf/fde.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fde_range *r;
	size_t n;

	if (size < 1)
		return 0;
	if (fde_parse(data + 1, size - 1, 0x1000, data[0] & 1, &r, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].start >= r[i].end || (i && r[i - 1].start > r[i].start))
			abort();
	}
	free(r);
	return 0;
}
