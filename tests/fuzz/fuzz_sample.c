/* Fuzz entry point: a perf ring record (PERF_RECORD_SAMPLE payload as the
 * kernel lays it out), decoded with and without a callchain; then the same
 * bytes as a record of the type its header names (perfrecord_decode), the
 * header's size set to the input's. A decoded sample's stack copy and
 * kernel pcs lie inside the record; an exec's name is at most 16 bytes. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/sample/perfrecord.h"

static void check_sample(const struct sample *s, const uint8_t *rec, size_t size)
{
	if (s->stack && ((const uint8_t *)s->stack < rec ||
			 (const uint8_t *)s->stack + s->stack_size > rec + size))
		abort(); /* stack copy must lie inside the record */
	if (s->nkpcs < 0 || (s->nkpcs && !s->kpcs))
		abort();
	if (s->nkpcs &&
	    ((const uint8_t *)s->kpcs < rec || (const uint8_t *)(s->kpcs + s->nkpcs) > rec + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Records are 8-byte aligned in the ring: keep that here. */
	uint64_t *rec = malloc(size + 8);
	struct sample s;
	if (!rec)
		return 0;
	memcpy(rec, data, size);
	for (int cc = 0; cc < 2; cc++)
		if (perfrecord_parse_sample(rec, size, cc, &s) == 0)
			check_sample(&s, (const uint8_t *)rec, size);
	if (size >= sizeof(struct perf_event_header) && size <= UINT16_MAX) {
		struct perf_event_header *h = (struct perf_event_header *)rec;
		struct perfrecord r;
		h->size = (uint16_t)size;
		for (int cc = 0; cc < 2; cc++) {
			if (perfrecord_decode(h, cc, &r))
				continue;
			if (r.kind == PERFRECORD_SAMPLE)
				check_sample(&r.sample, (const uint8_t *)rec, size);
			if (memchr(r.comm, 0, sizeof(r.comm)) == NULL)
				abort(); /* the name is NUL-terminated */
		}
	}
	free(rec);
	return 0;
}
