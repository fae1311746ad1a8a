/* Fuzz entry point: a JVM's hsperfdata file (runtime/hsperf.c). Every
 * offset and length in it is the target's; a parse must never read past
 * the buffer, and what it gives must be figures, whatever the bytes. The
 * input is copied to a buffer of its own size so ASan sees any overread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/runtime/hsperf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	struct hsperf h;

	if (!b)
		return 0;
	memcpy(b, data, size);
	if (hsperf_parse(b, size, &h) == 0 && h.gc_time_s < 0)
		abort();
	free(b);
	return 0;
}
