/* Unit tests for the perf ring reader on a fake buffer: empty, batches,
 * wrap-around, overrun and corrupt headers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/sample/ring.h"

#define DATA 256

struct fake {
	uint8_t *mem;
	struct perf_event_mmap_page *meta;
	uint64_t head;
};

static void fake_init(struct fake *f)
{
	f->mem = calloc(1, 4096 + DATA);
	f->meta = (void *)f->mem;
	f->meta->data_offset = 4096;
	f->meta->data_size = DATA;
	f->head = 0;
}

/* Append a record of total size `size` whose payload bytes are `fill`. */
static void fake_put(struct fake *f, uint32_t type, uint16_t size, uint8_t fill)
{
	uint8_t rec[1024];
	struct perf_event_header h = {.type = type, .misc = 0, .size = size};
	memcpy(rec, &h, sizeof(h));
	memset(rec + sizeof(h), fill, size - sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		f->mem[4096 + ((f->head + i) & (DATA - 1))] = rec[i];
	f->head += size;
}

static void fake_publish(struct fake *f)
{
	f->meta->data_head = f->head;
}

/* Each test's fake buffer and the ring reading it. */
struct fixture {
	struct fake f;
	struct ring r;
};

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));

	if (!x)
		return -1;
	*state = x;
	fake_init(&x->f);
	return ring_init(&x->r, x->f.mem, DATA) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *x = *state;

	ring_fini(&x->r);
	free(x->f.mem);
	free(x);
	return 0;
}

/* The batch is over: nothing more to read, and the tail published. */
static void assert_drained(struct ring *r, const struct fake *f, uint64_t tail)
{
	const struct perf_event_header *rec;

	assert_int_equal(ring_next(r, &rec), 0);
	assert_int_equal(f->meta->data_tail, tail);
}

static void test_empty(void **state)
{
	struct ring *r = &((struct fixture *)*state)->r;
	const struct perf_event_header *rec;

	assert_int_equal(ring_next(r, &rec), 0);
	assert_int_equal(ring_pending(r), 0);
}

static void test_batch_and_tail(void **state)
{
	struct fake *f = &((struct fixture *)*state)->f;
	struct ring *r = &((struct fixture *)*state)->r;
	const struct perf_event_header *rec;

	fake_put(f, PERF_RECORD_SAMPLE, 24, 0xaa);
	fake_put(f, PERF_RECORD_LOST, 32, 0xbb);
	fake_publish(f);
	assert_int_equal(ring_pending(r), 56);

	assert_int_equal(ring_next(r, &rec), 1);
	assert_int_equal(rec->type, PERF_RECORD_SAMPLE);
	assert_int_equal(rec->size, 24);
	assert_int_equal(((uint8_t *)rec)[8], 0xaa);
	/* The tail is published only when the batch is done. */
	assert_int_equal(f->meta->data_tail, 0);
	assert_int_equal(ring_next(r, &rec), 1);
	assert_int_equal(rec->type, PERF_RECORD_LOST);
	assert_int_equal(((uint8_t *)rec)[31], 0xbb);
	assert_drained(r, f, 56);

	/* A record written after the batch shows in the next one. */
	fake_put(f, PERF_RECORD_EXIT, 16, 0xcc);
	fake_publish(f);
	assert_int_equal(ring_next(r, &rec), 1);
	assert_int_equal(rec->type, PERF_RECORD_EXIT);
	assert_drained(r, f, 72);
}

static void test_wrap_around(void **state)
{
	struct fake *f = &((struct fixture *)*state)->f;
	struct ring *r = &((struct fixture *)*state)->r;
	const struct perf_event_header *rec;

	/* Fill to 200 bytes and consume, so the next 120-byte record wraps. */
	fake_put(f, PERF_RECORD_SAMPLE, 200, 1);
	fake_publish(f);
	assert_int_equal(ring_next(r, &rec), 1);
	assert_int_equal(ring_next(r, &rec), 0);
	fake_put(f, PERF_RECORD_SAMPLE, 120, 0x5c);
	fake_publish(f);
	assert_int_equal(ring_next(r, &rec), 1);
	assert_int_equal(rec->size, 120);
	for (int i = 8; i < 120; i++)
		assert_int_equal(((uint8_t *)rec)[i], 0x5c);
	/* It was handed out from the scratch copy, not the ring. */
	assert_ptr_equal((void *)rec, (void *)r->scratch);
	assert_drained(r, f, 320);
}

static void test_overrun(void **state)
{
	struct fake *f = &((struct fixture *)*state)->f;
	struct ring *r = &((struct fixture *)*state)->r;
	const struct perf_event_header *rec;

	/* The head ran more than a whole buffer ahead: nothing is trustworthy. */
	f->meta->data_head = DATA + 64;
	assert_int_equal(ring_next(r, &rec), -EBADMSG);
	assert_int_equal(r->corrupt, 1);
	assert_int_equal(f->meta->data_tail, DATA + 64);
	assert_int_equal(ring_next(r, &rec), 0);
}

static void test_corrupt_header(void **state)
{
	struct fake *f = &((struct fixture *)*state)->f;
	struct ring *r = &((struct fixture *)*state)->r;
	const struct perf_event_header *rec;

	/* size 0 would loop forever; size beyond head reads garbage. */
	fake_put(f, PERF_RECORD_SAMPLE, 16, 0);
	struct perf_event_header *h = (void *)(f->mem + 4096);
	h->size = 0;
	fake_publish(f);
	assert_int_equal(ring_next(r, &rec), -EBADMSG);
	fake_put(f, PERF_RECORD_SAMPLE, 16, 0);
	h = (void *)(f->mem + 4096 + 16);
	h->size = 200;
	fake_publish(f);
	assert_int_equal(ring_next(r, &rec), -EBADMSG);
	assert_int_equal(r->corrupt, 2);
}

static void test_bad_size(void **state)
{
	struct ring r;
	uint8_t *mem = calloc(1, 4096 + 300);
	assert_int_equal(ring_init(&r, mem, 300), -EINVAL);
	free(mem);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_empty),   T(test_batch_and_tail), T(test_wrap_around),
	    T(test_overrun), T(test_corrupt_header), TEST(test_bad_size),
	};
	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
