/* Fuzz entry point: /proc/PID/smaps text (memmap_parse) — mapping paths are
 * chosen by the target (a file name may hold any byte but '/' and NUL).
 * Two snapshots of the same input, then every row's change. */
#include <stdint.h>
#include <stdlib.h>

#include "stacktop/memory/memmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct memmap m;
	uint64_t now;
	int64_t d;
	double span;
	memmap_init(&m, 1, 1000000000ull);
	memmap_parse(&m, (const char *)data, size, 1000000000ull);
	memmap_parse(&m, (const char *)data, size / 2, 2000000000ull);
	for (int r = 0; r < m.n; r++)
		memmap_change(&m, r, 0, &now, &d, &span);
	memmap_free(&m);
	return 0;
}
