/*
 * ring — reader of one perf_event mmap ring buffer.
 *
 * The kernel writes records at data_head; we read from data_tail and publish
 * the new tail when a batch is done, so the kernel can reuse the space (the
 * mapping is PROT_WRITE: the kernel never overwrites unread data and reports
 * what it had to drop as PERF_RECORD_LOST). data_head is read with acquire
 * ordering and data_tail written with release ordering, as
 * include/uapi/linux/perf_event.h prescribes.
 *
 * A record that wraps around the end of the buffer is copied into a scratch
 * buffer owned by the ring, so callers always see a contiguous record; it is
 * valid until the next ring_next. The ring does not own the mapping.
 */
#ifndef STACKTOP_RING_H
#define STACKTOP_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;	  /* data bytes, a power of two */
	uint64_t head;	  /* snapshot of data_head for this batch */
	uint64_t tail;	  /* our read position */
	uint8_t *scratch; /* for records that wrap */
	uint64_t corrupt; /* batches dropped because head/tail made no sense */
};

/* base is the start of the mapping (metadata page); data_size the bytes
 * after it (power of two). If the metadata page gives data_offset and
 * data_size (kernel >= 4.1) those win. */
int ring_init(struct ring *r, void *base, uint64_t data_size);
void ring_fini(struct ring *r);

/* Next record of the current batch. Returns 1 and *rec, 0 when the batch is
 * empty (the tail is published), or -EBADMSG when the buffer is corrupt
 * (everything up to head is skipped and counted in r->corrupt). */
int ring_next(struct ring *r, const struct perf_event_header **rec);

/* Look at the records waiting past the read position (up to the kernel's
 * data_head now) without consuming them: fn gets each one, contiguous (a
 * record that wraps is copied into the scratch buffer, so a record from
 * ring_next is invalid afterwards). Stops at the first header that makes
 * no sense. Returns the number of records seen. */
int ring_peek(struct ring *r, void (*fn)(void *ctx, const struct perf_event_header *rec),
	      void *ctx);

/* Publish the read position now, in the middle of a batch: the records
 * read so far are free for the kernel to reuse (ring_next publishes at the
 * end of a batch by itself). */
void ring_release(struct ring *r);

/* Bytes waiting to be read (head - tail). */
uint64_t ring_pending(struct ring *r);

#endif
