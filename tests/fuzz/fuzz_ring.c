/*
 * Fuzz entry point: the perf mmap ring reader (ring.c) and the decoding of
 * what it hands out (perf.c's perf_drain → perf_dispatch → perfrecord.c's
 * perfrecord_decode: samples and the side-band records COMM, FORK, EXIT,
 * MMAP, MMAP2, LOST, THROTTLE).
 *
 * The input builds a fake mapping: a metadata page whose data_tail and
 * data_head come from the input (any 64-bit tail, so the counters wrap, and
 * a head that is usually within one buffer of it but may lie; both stay
 * 8-byte aligned, as the kernel and ring.c keep them), then a data
 * area of 64..2048 bytes filled with the rest of the input from the tail's
 * position on, so records wrap around the end and their header.size may
 * lie. The mapping is allocated exactly, so ASan traps any read past the
 * data area. Two batches are read (the head moves on once), first with
 * ring_next directly, then through perf_drain_ring.
 *
 * The second pass goes through perf_drain_ring, the same record handling
 * perf_drain gives every thread's ring, over the fake ring.
 *
 * Properties: ring_next returns 1, 0 or -EBADMSG; a record is at least a
 * header, never longer than the data area, and lies inside the data area or
 * the ring's scratch buffer; a batch never yields more records than fit in
 * it; a decoded sample's stack copy and kernel pcs lie inside the record;
 * a COMM name is at most 16 bytes.
 */
#include "stacktop/sample/perf.h"
#include "stacktop/sample/perfrecord.h"
#include "stacktop/sample/ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define META_PAGE 4096

/* The record just handed out must lie in the data area or the scratch. */
static struct {
	const uint8_t *data, *scratch;
	uint64_t size;
	int nsamples;
} cur;

static void inside(const void *p, uint64_t n)
{
	const uint8_t *b = p;
	bool in_data = b >= cur.data && n <= cur.size && b + n <= cur.data + cur.size;
	bool in_scratch = b >= cur.scratch && n <= 65536 && b + n <= cur.scratch + 65536;
	if (!in_data && !in_scratch)
		abort();
}

static void on_sample(void *ctx, const struct sample *s)
{
	(void)ctx;
	if (s->stack)
		inside(s->stack, s->stack_size);
	if (s->nkpcs < 0 || (s->nkpcs && !s->kpcs) || s->nkpcs > 4096)
		abort();
	if (s->nkpcs)
		inside(s->kpcs, (uint64_t)s->nkpcs * 8);
	cur.nsamples++;
}

static void on_thread(void *ctx, pid_t pid, pid_t tid)
{
	(void)ctx;
	(void)pid;
	(void)tid;
}

static void on_exec(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	if (strlen(comm) > 16)
		abort();
}

static uint64_t get_u64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, p, n < 8 ? n : 8);
	return v;
}

/* Read batches with ring_next until the ring is empty or corrupt. */
static void drain_direct(struct ring *r)
{
	const struct perf_event_header *h;
	uint64_t limit = r->size / sizeof(*h) + 2;
	int rc;

	while ((rc = ring_next(r, &h)) == 1) {
		if (!limit--)
			abort(); /* more records than the batch can hold */
		if (h->size < sizeof(*h) || h->size > r->size)
			abort();
		inside(h, h->size);
		if (r->head - r->tail > r->size)
			abort(); /* read past the snapshot of head */
		if (h->type == PERF_RECORD_SAMPLE) {
			struct sample s;
			for (int cc = 0; cc < 2; cc++)
				if (perfrecord_parse_sample(h, h->size, cc, &s) == 0)
					on_sample(NULL, &s);
		}
	}
	if (rc != 0 && rc != -EBADMSG)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* sample, thread_new, thread_exit, exec, mmap */
	static const struct perf_callbacks cb = {on_sample, on_thread, on_thread, on_exec,
						 on_thread};
	if (size < 18)
		return 0;
	uint64_t dsize = 64ull << (data[0] % 6);
	uint8_t flags = data[1];
	/* We alone write data_tail, always 8-byte aligned (records are). */
	uint64_t tail = get_u64(data + 2, 8) & ~7ull;
	uint64_t d1 = get_u64(data + 10, 4), d2 = get_u64(data + 14, 4);
	if (!(flags & 4)) {
		/* Mostly a head the kernel could have written. */
		d1 %= dsize + 1;
		d2 %= dsize + 1;
	}
	/* The kernel moves data_head by whole records: 8-byte steps. */
	d1 &= ~7ull;
	d2 &= ~7ull;
	data += 18;
	size -= 18;

	uint8_t *map = calloc(1, META_PAGE + dsize);
	if (!map)
		return 0;
	struct perf_event_mmap_page *meta = (void *)map;
	for (size_t i = 0; i < size && i < dsize; i++)
		map[META_PAGE + ((tail + i) & (dsize - 1))] = data[i];
	if (flags & 2) {
		meta->data_offset = META_PAGE;
		meta->data_size = dsize;
	}

	/* Once straight through ring_next, once through perf_drain. */
	for (int pass = 0; pass < 2; pass++) {
		struct perf_stats st = {0};
		struct ring ring_, *r = &ring_;

		meta->data_tail = tail;
		meta->data_head = tail + d1;
		if (ring_init(r, map, dsize))
			abort();
		cur.data = map + META_PAGE;
		cur.scratch = r->scratch;
		cur.size = dsize;
		cur.nsamples = 0;
		int total = 0;
		for (int batch = 0; batch < 2; batch++) {
			if (pass == 0) {
				drain_direct(r);
			} else {
				int n = perf_drain_ring(r, flags & 1, &cb, NULL, &st);
				total += n;
				if (n < 0 || (uint64_t)total != st.samples || total != cur.nsamples)
					abort();
			}
			/* The kernel writes more (the data area is reused as it is). */
			meta->data_head += d2;
		}
		ring_fini(r);
	}
	free(map);
	return 0;
}
