/*
 * ring — reader of one perf_event mmap ring buffer (see ring.h).
 *
 * Batches: the first ring_next after the previous batch ended takes a fresh
 * snapshot of data_head; records are handed out until the snapshot is
 * reached, then data_tail is published once. Publishing once per batch, not
 * per record, keeps the stores to the shared page rare.
 *
 * ring_peek reads ahead without moving the tail: the sampler looks for
 * FORK records there before a drain (see perf.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/sample/ring.h"

int ring_init(struct ring *r, void *base, uint64_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->meta = base;
	uint64_t off = r->meta->data_offset;
	uint64_t size = r->meta->data_size;
	if (!off || !size) {
		off = 4096;
		size = data_size;
	}
	if (!size || (size & (size - 1)))
		return -EINVAL;
	r->data = (uint8_t *)base + off;
	r->size = size;
	r->tail = __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
	r->head = r->tail;
	r->scratch = malloc(65536);
	return r->scratch ? 0 : -ENOMEM;
}

void ring_fini(struct ring *r)
{
	free(r->scratch);
	r->scratch = NULL;
}

static void ring_publish(struct ring *r)
{
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

void ring_release(struct ring *r)
{
	ring_publish(r);
}

uint64_t ring_pending(struct ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) - r->tail;
}

static void ring_header_at(const struct ring *r, uint64_t pos, struct perf_event_header *hdr);

/* Drop the rest of a batch that cannot be parsed. */
static int ring_skip_corrupt(struct ring *r)
{
	r->corrupt++;
	r->tail = r->head;
	ring_publish(r);
	return -EBADMSG;
}

int ring_next(struct ring *r, const struct perf_event_header **rec)
{
	if (r->tail == r->head) {
		/* Batch done: publish, then look for more. */
		ring_publish(r);
		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		if (r->head == r->tail)
			return 0;
		if (r->head - r->tail > r->size)
			return ring_skip_corrupt(r);
	}
	uint64_t avail = r->head - r->tail;
	if (avail < sizeof(struct perf_event_header))
		return ring_skip_corrupt(r);

	uint64_t pos = r->tail & (r->size - 1);
	struct perf_event_header hdr;
	/* The header itself may wrap (records are 8-byte aligned, so it can't,
	 * but a corrupt buffer should not make us read out of bounds). */
	ring_header_at(r, pos, &hdr);
	/* The kernel pads every record to 8 bytes; a size that is not would
	 * misalign every record after it (and the u64 loads that decode it). */
	if (hdr.size < sizeof(hdr) || hdr.size > avail || hdr.size % 8)
		return ring_skip_corrupt(r);

	if (pos + hdr.size <= r->size) {
		*rec = (const struct perf_event_header *)(r->data + pos);
	} else {
		uint64_t first = r->size - pos;
		memcpy(r->scratch, r->data + pos, first);
		memcpy(r->scratch + first, r->data, hdr.size - first);
		*rec = (const struct perf_event_header *)r->scratch;
	}
	r->tail += hdr.size;
	return 1;
}

/* The header of the record at pos (it may wrap in a corrupt buffer). */
static void ring_header_at(const struct ring *r, uint64_t pos, struct perf_event_header *hdr)
{
	if (pos + sizeof(*hdr) <= r->size) {
		memcpy(hdr, r->data + pos, sizeof(*hdr));
	} else {
		uint64_t first = r->size - pos;
		memcpy(hdr, r->data + pos, first);
		memcpy((uint8_t *)hdr + first, r->data, sizeof(*hdr) - first);
	}
}

int ring_peek(struct ring *r, void (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t at = r->tail;
	int n = 0;

	if (head - at > r->size)
		return 0;
	while (head - at >= sizeof(struct perf_event_header)) {
		uint64_t pos = at & (r->size - 1);
		struct perf_event_header hdr;
		ring_header_at(r, pos, &hdr);
		if (hdr.size < sizeof(hdr) || hdr.size > head - at || hdr.size % 8)
			break;
		if (pos + hdr.size <= r->size) {
			fn(ctx, (const struct perf_event_header *)(r->data + pos));
		} else {
			uint64_t first = r->size - pos;
			memcpy(r->scratch, r->data + pos, first);
			memcpy(r->scratch + first, r->data, hdr.size - first);
			fn(ctx, (const struct perf_event_header *)r->scratch);
		}
		at += hdr.size;
		n++;
	}
	return n;
}
