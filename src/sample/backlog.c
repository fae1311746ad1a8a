/*
 * backlog — records taken out of perf rings (see backlog.h).
 *
 * A chunk is 1 MiB of records back to back; a record never spans two
 * chunks (a new chunk starts when one does not fit), so a record is always
 * contiguous and never moves.
 */
#include "stacktop/sample/backlog.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BACKLOG_CHUNK (1u << 20)

struct backlog_chunk {
	struct backlog_chunk *next;
	size_t used; /* bytes written */
	size_t read; /* bytes consumed */
	_Alignas(8) uint8_t data[BACKLOG_CHUNK];
};

void backlog_init(struct backlog *b, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap;
}

void backlog_fini(struct backlog *b)
{
	struct backlog_chunk *c = b->first;
	while (c) {
		struct backlog_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(b->spare);
	memset(b, 0, sizeof(*b));
}

/* A chunk with room for size more bytes at the end of the list. */
static struct backlog_chunk *backlog_room(struct backlog *b, size_t size)
{
	if (b->last && b->last->used + size <= BACKLOG_CHUNK)
		return b->last;
	struct backlog_chunk *c = b->spare;
	if (c)
		b->spare = NULL;
	else if (!(c = malloc(sizeof(*c))))
		return NULL;
	c->next = NULL;
	c->used = c->read = 0;
	if (b->last)
		b->last->next = c;
	else
		b->first = c;
	b->last = c;
	return c;
}

void backlog_set_cut(struct backlog *b,
		     size_t (*cut)(const struct perf_event_header *rec, void *dst, void *ctx),
		     void *ctx)
{
	b->cut = cut;
	b->cut_ctx = ctx;
}

int backlog_push(struct backlog *b, const struct perf_event_header *rec)
{
	size_t size = rec->size;
	if (size < sizeof(*rec) || size % 8)
		return -EINVAL;
	/* a cut that would not shorten the record, or not to a multiple of
	 * 8, is not used */
	size_t cut = b->cut ? b->cut(rec, NULL, b->cut_ctx) : size;
	if (cut >= size || cut < sizeof(*rec) || cut % 8)
		cut = 0;
	else
		size = cut;
	struct backlog_chunk *c = backlog_room(b, size);
	if (!c)
		return -ENOMEM;
	if (cut)
		b->cut(rec, c->data + c->used, b->cut_ctx);
	else
		memcpy(c->data + c->used, rec, size);
	c->used += size;
	b->bytes += size;
	if (b->bytes > b->peak)
		b->peak = b->bytes;
	return 0;
}

int backlog_take_ring(struct backlog *b, struct ring *r)
{
	const struct perf_event_header *h;
	uint64_t taken = 0;
	int n = 0;

	if (b->bytes >= b->cap)
		return -ENOSPC;
	while (taken < r->size && ring_next(r, &h) == 1) {
		if (backlog_push(b, h) == -ENOMEM) {
			ring_release(r);
			return -ENOMEM; /* that record is lost, as the kernel would */
		}
		taken += h->size;
		n++;
	}
	ring_release(r);
	return n;
}

const struct perf_event_header *backlog_front(const struct backlog *b)
{
	const struct backlog_chunk *c = b->first;
	if (!c || c->read == c->used)
		return NULL;
	return (const struct perf_event_header *)(c->data + c->read);
}

void backlog_pop(struct backlog *b)
{
	struct backlog_chunk *c = b->first;
	if (!c || c->read == c->used)
		return;
	size_t size = ((const struct perf_event_header *)(c->data + c->read))->size;
	c->read += size;
	b->bytes -= size;
	if (c->read < c->used)
		return;
	if (c == b->last) {
		c->used = c->read = 0; /* the last one: reused in place */
		return;
	}
	b->first = c->next;
	if (b->spare)
		free(c);
	else
		b->spare = c;
}

bool backlog_empty(const struct backlog *b)
{
	return b->bytes == 0;
}

void backlog_peek(const struct backlog *b,
		  void (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx)
{
	for (const struct backlog_chunk *c = b->first; c; c = c->next)
		for (size_t at = c->read; at < c->used;) {
			const struct perf_event_header *h =
			    (const struct perf_event_header *)(c->data + at);
			fn(ctx, h);
			at += h->size;
		}
}
