/*
 * backlog — records taken out of perf rings, kept in order until they are
 * dispatched.
 *
 * Why: the kernel drops what does not fit in a ring, and the work done per
 * sample (unwinding, and the first time a module is seen, loading its
 * symbols and DWARF) can take far longer than a ring lasts. So the sampler
 * first empties every ring into its backlog (a plain copy), then names the
 * samples from there, and empties the rings again whenever the slow work
 * lets it (pump). The rings then only need to hold what arrives between
 * two such reads.
 *
 * Contract: records are copied whole, or as backlog_set_cut's function
 * shortens them (perf records are at most 64 KiB), into
 * chunks that never move, so a record from backlog_front stays valid while
 * more records are pushed, until it is popped. backlog_take_ring stops
 * before a ring when the backlog holds cap bytes or more: what stays in the
 * ring is then the kernel's to drop and count (PERF_RECORD_LOST), and the
 * backlog's memory stays bounded. Chunks are freed as they are consumed
 * (one is kept for reuse).
 */
#ifndef STACKTOP_BACKLOG_H
#define STACKTOP_BACKLOG_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#include "stacktop/sample/ring.h"

struct backlog_chunk;

struct backlog {
	struct backlog_chunk *first, *last; /* oldest first */
	struct backlog_chunk *spare;
	size_t bytes; /* records held */
	size_t cap;
	size_t peak; /* the most bytes ever held */
	/* backlog_set_cut: a record copied shorter (its size with dst NULL,
	 * written to dst otherwise); NULL: copied whole */
	size_t (*cut)(const struct perf_event_header *rec, void *dst, void *ctx);
	void *cut_ctx;
};

void backlog_init(struct backlog *b, size_t cap);
void backlog_fini(struct backlog *b);

/* Records pushed from now on are copied through cut (perf's samples: the
 * unused part of their stack copy left out). */
void backlog_set_cut(struct backlog *b,
		     size_t (*cut)(const struct perf_event_header *rec, void *dst, void *ctx),
		     void *ctx);

/* Append a copy of rec (rec->size bytes, or what the cut keeps). -ENOMEM, or -EINVAL for a size
 * that is not a positive multiple of 8. */
int backlog_push(struct backlog *b, const struct perf_event_header *rec);

/* Move r's records into the backlog (at most one ring's worth, so a ring
 * the kernel keeps filling cannot hold us here). Returns the records
 * moved, -ENOSPC when the backlog was full before it started, -ENOMEM.
 * r->corrupt counts batches the ring dropped as corrupt. */
int backlog_take_ring(struct backlog *b, struct ring *r);

/* The oldest record, NULL when empty; valid until it is popped. */
const struct perf_event_header *backlog_front(const struct backlog *b);
void backlog_pop(struct backlog *b);

bool backlog_empty(const struct backlog *b);

/* Every record held, oldest first, without consuming them. */
void backlog_peek(const struct backlog *b,
		  void (*fn)(void *ctx, const struct perf_event_header *rec), void *ctx);

#endif
