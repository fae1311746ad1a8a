/* Unit tests for the backlog of ring records: order, records that stay
 * put while more are pushed, the cap, peeking, and a fake ring emptied
 * into it (with a record that wraps). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/sample/backlog.h"

/* A record of size bytes whose payload is n. */
static const struct perf_event_header *rec(uint16_t size, uint32_t n)
{
	static _Alignas(8) uint8_t buf[65536];
	struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .size = size};
	memset(buf, 0, size);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &n, sizeof(n));
	return (const struct perf_event_header *)buf;
}

static uint32_t payload(const struct perf_event_header *h)
{
	uint32_t n;
	memcpy(&n, h + 1, sizeof(n));
	return n;
}

/* Records come out in order, each the size it went in, across chunks. */
static void test_order(void **state)
{
	struct backlog b;
	backlog_init(&b, 64u << 20);
	assert_true(backlog_empty(&b));
	assert_null(backlog_front(&b));
	for (uint32_t i = 0; i < 200; i++)
		assert_int_equal(backlog_push(&b, rec((uint16_t)(16 + (i % 8) * 8192), i)), 0);
	for (uint32_t i = 0; i < 200; i++) {
		const struct perf_event_header *h = backlog_front(&b);
		assert_non_null(h);
		assert_int_equal(h->size, 16 + (i % 8) * 8192);
		assert_int_equal(payload(h), i);
		backlog_pop(&b);
	}
	assert_true(backlog_empty(&b));
	assert_null(backlog_front(&b));
	backlog_fini(&b);
}

/* The front record does not move while many more are pushed behind it. */
static void test_front_stays(void **state)
{
	struct backlog b;
	backlog_init(&b, 64u << 20);
	assert_int_equal(backlog_push(&b, rec(64, 7)), 0);
	const struct perf_event_header *h = backlog_front(&b);
	for (uint32_t i = 0; i < 100; i++)
		assert_int_equal(backlog_push(&b, rec(60000, i)), 0);
	assert_ptr_equal(backlog_front(&b), h);
	assert_int_equal(payload(h), 7);
	assert_int_equal(h->size, 64);
	backlog_fini(&b);
}

static void count(void *ctx, const struct perf_event_header *h)
{
	uint32_t *n = ctx;
	assert_int_equal(payload(h), *n);
	(*n)++;
}

static void test_peek(void **state)
{
	struct backlog b;
	uint32_t n = 3;
	backlog_init(&b, 64u << 20);
	for (uint32_t i = 0; i < 50; i++)
		assert_int_equal(backlog_push(&b, rec(40000, i)), 0);
	for (int i = 0; i < 3; i++)
		backlog_pop(&b);
	backlog_peek(&b, count, &n);
	assert_int_equal(n, 50);
	assert_int_equal(payload(backlog_front(&b)), 3); /* nothing consumed */
	backlog_fini(&b);
}

static void test_bad_size(void **state)
{
	struct backlog b;
	backlog_init(&b, 1024);
	assert_int_equal(backlog_push(&b, rec(12, 0)), -EINVAL);
	assert_int_equal(backlog_push(&b, rec(4, 0)), -EINVAL);
	assert_true(backlog_empty(&b));
	backlog_fini(&b);
}

/* A fake ring of 256 bytes with records written at head. */
#define DATA 256
struct fake {
	uint8_t *mem;
	struct perf_event_mmap_page *meta;
	uint64_t head;
};

static void fake_put(struct fake *f, uint16_t size, uint32_t n)
{
	const uint8_t *r = (const uint8_t *)rec(size, n);
	for (uint16_t i = 0; i < size; i++)
		f->mem[4096 + ((f->head + i) & (DATA - 1))] = r[i];
	f->head += size;
	f->meta->data_head = f->head;
}

/* The ring's records move into the backlog in order (one wraps), and the
 * tail is published: the kernel may write again. A full backlog takes
 * nothing and leaves the ring as it was. */
static void test_take_ring(void **state)
{
	struct fake f = {.mem = calloc(1, 4096 + DATA)};
	struct ring r;
	struct backlog b;
	uint32_t n = 0;

	f.meta = (void *)f.mem;
	f.meta->data_offset = 4096;
	f.meta->data_size = DATA;
	assert_int_equal(ring_init(&r, f.mem, DATA), 0);
	backlog_init(&b, 150);
	fake_put(&f, 96, 0);
	fake_put(&f, 96, 1);
	assert_int_equal(backlog_take_ring(&b, &r), 2);
	assert_int_equal(f.meta->data_tail, 192);
	fake_put(&f, 96, 2);				      /* wraps around the end */
	assert_int_equal(backlog_take_ring(&b, &r), -ENOSPC); /* 192 held, cap 150 */
	assert_int_equal(f.meta->data_tail, 192);
	backlog_pop(&b);
	assert_int_equal(backlog_take_ring(&b, &r), 1);
	assert_int_equal(f.meta->data_tail, 288);
	n = 1;
	backlog_peek(&b, count, &n);
	assert_int_equal(n, 3);
	backlog_fini(&b);
	ring_fini(&r);
	free(f.mem);
}

/* A cut that keeps the first 16 bytes, or returns a size it must not use
 * (not shorter, not a multiple of 8): the backlog holds what it kept. */
static size_t cut16(const struct perf_event_header *r, void *dst, void *ctx)
{
	size_t keep = *(size_t *)ctx;
	if (dst) {
		memcpy(dst, r, keep);
		((struct perf_event_header *)dst)->size = (uint16_t)keep;
	}
	return keep;
}

static void test_cut(void **state)
{
	static const size_t keeps[] = {16, 12, 4096, 2};
	for (size_t k = 0; k < sizeof(keeps) / sizeof(keeps[0]); k++) {
		struct backlog b;
		size_t keep = keeps[k],
		       want = keep < 1024 && keep % 8 == 0 && keep >= 8 ? keep : 1024;
		backlog_init(&b, 64u << 20);
		backlog_set_cut(&b, cut16, &keep);
		for (uint32_t i = 0; i < 3; i++)
			assert_int_equal(backlog_push(&b, rec(1024, i)), 0);
		assert_int_equal(b.bytes, 3 * want);
		for (uint32_t i = 0; i < 3; i++) {
			const struct perf_event_header *h = backlog_front(&b);
			assert_int_equal(h->size, want);
			assert_int_equal(payload(h), i);
			backlog_pop(&b);
		}
		assert_true(backlog_empty(&b));
		backlog_fini(&b);
	}
}

TEST_MAIN(NULL, NULL, TEST(test_cut), TEST(test_order), TEST(test_front_stays), TEST(test_peek),
	  TEST(test_bad_size), TEST(test_take_ring))
