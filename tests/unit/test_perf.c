/* Unit tests for the perf sampler: decoding a crafted sample record, and
 * sampling this very process through the real kernel (registers, stack
 * copy, new-thread records, removal). */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/perf.h"

/* Build a sample record: ip, pid/tid, time, callchain, regs, stack. */
static size_t build_record(uint64_t *buf, bool callchain, uint64_t stack_size, uint64_t dyn)
{
	size_t n = 1; /* header */
	buf[n++] = 0x401000; /* ip */
	buf[n++] = (77ull << 32) | 42; /* tid 77, pid 42 */
	buf[n++] = 123456789; /* time */
	if (callchain) {
		buf[n++] = 4;
		buf[n++] = PERF_CONTEXT_KERNEL;
		buf[n++] = 0xffffffff81000010ull;
		buf[n++] = 0xffffffff81000020ull;
		buf[n++] = PERF_CONTEXT_USER;
	}
	buf[n++] = PERF_SAMPLE_REGS_ABI_64;
	for (int i = 0; i < 17; i++)
		buf[n++] = 1000 + i; /* AX BX CX DX SI DI BP SP IP R8..R15 */
	buf[n++] = stack_size;
	for (uint64_t i = 0; i < stack_size / 8; i++)
		buf[n++] = 0xabcdef00 + i;
	if (stack_size)
		buf[n++] = dyn;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)(n * 8)};
	memcpy(buf, &h, sizeof(h));
	return n * 8;
}

static void test_parse_sample(void **state)
{
	uint64_t buf[256];
	struct sample s;
	size_t size = build_record(buf, true, 64, 40);
	assert_int_equal(perf_parse_sample(buf, size, true, &s), 0);
	assert_int_equal(s.pid, 42);
	assert_int_equal(s.tid, 77);
	assert_int_equal(s.time_ns, 123456789);
	assert_int_equal(s.nkpcs, 2);
	assert_int_equal(s.kpcs[0], 0xffffffff81000010ull);
	assert_int_equal(s.kpcs[1], 0xffffffff81000020ull);
	/* perf order AX BX CX DX SI DI BP SP IP → DWARF order. */
	assert_int_equal(s.regs[0], 1000); /* rax */
	assert_int_equal(s.regs[3], 1001); /* rbx */
	assert_int_equal(s.regs[2], 1002); /* rcx */
	assert_int_equal(s.regs[1], 1003); /* rdx */
	assert_int_equal(s.regs[SAMPLE_REG_RBP], 1006);
	assert_int_equal(s.regs[SAMPLE_REG_RSP], 1007);
	assert_int_equal(s.regs[SAMPLE_REG_RIP], 1008);
	assert_int_equal(s.regs[8], 1009); /* r8 */
	assert_int_equal(s.regs[15], 1016); /* r15 */
	/* Only dyn_size bytes of the copy are valid. */
	assert_int_equal(s.stack_size, 40);
	uint64_t first;
	memcpy(&first, s.stack, 8);
	assert_int_equal(first, 0xabcdef00);
}

static void test_parse_truncated(void **state)
{
	uint64_t buf[256];
	struct sample s;
	size_t size = build_record(buf, true, 64, 64);
	for (size_t cut = 8; cut < size; cut += 8)
		assert_int_equal(perf_parse_sample(buf, cut, true, &s), -EBADMSG);
	/* A callchain length that points past the end. */
	size = build_record(buf, true, 0, 0);
	buf[4] = 1000;
	assert_int_equal(perf_parse_sample(buf, size, true, &s), -EBADMSG);
}

struct seen {
	int samples, with_regs, with_stack, mine, new_threads;
	pid_t new_tid;
	uint64_t local_addr;
	int sp_near;
};

static void on_sample(void *ctx, const struct sample *s)
{
	struct seen *v = ctx;
	v->samples++;
	v->with_regs += s->regs_mask != 0;
	v->with_stack += s->stack_size > 0;
	v->mine += s->tid == gettid();
	uint64_t sp = s->regs[SAMPLE_REG_RSP];
	/* Our stack pointer sits within a few KiB below a local of the caller. */
	if (sp < v->local_addr && v->local_addr - sp < 65536)
		v->sp_near++;
}

static void on_new(void *ctx, pid_t pid, pid_t tid)
{
	struct seen *v = ctx;
	if (pid == getpid() && tid != getpid()) {
		v->new_threads++;
		v->new_tid = tid;
	}
}

/* Burn this much of our own CPU time (not wall time: on a busy machine we
 * may get only part of a core, and cpu-clock samples follow CPU time). */
static void burn(double seconds)
{
	struct timespec t0, t;
	volatile uint64_t x = 1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static void *quick_thread(void *arg)
{
	return arg;
}

static void test_live_sampling(void **state)
{
	struct perf_config cfg = {.rate_hz = 1000, .stack_size = 8192, .drain_interval_s = 0.05};
	struct perf_sampler *ps;
	struct perf_callbacks cb = {.sample = on_sample, .thread_new = on_new};
	struct seen v = {0};
	volatile int local = 0;
	v.local_addr = (uint64_t)(uintptr_t)&local;

	assert_int_equal(perf_new(&cfg, &ps), 0);
	int err = perf_add_thread(ps, getpid(), gettid());
	if (err == -EACCES || err == -EPERM) {
		perf_free(ps);
		skip(); /* not permitted here: the e2e tests cover the message */
	}
	assert_int_equal(err, 0);
	assert_int_equal(perf_add_thread(ps, getpid(), gettid()), -EEXIST);
	assert_true(perf_has_thread(ps, gettid()));
	for (int i = 0; i < 6; i++) {
		burn(0.05);
		perf_drain(ps, &cb, &v);
	}
	pthread_t th;
	pthread_create(&th, NULL, quick_thread, NULL);
	pthread_join(th, NULL);
	burn(0.01);
	perf_drain(ps, &cb, &v);

	/* 300 ms of CPU at 1 kHz: expect well over 100 samples. */
	assert_true(v.samples > 100);
	assert_int_equal(v.mine, v.samples);
	assert_int_equal(v.with_regs, v.samples);
	assert_int_equal(v.with_stack, v.samples);
	assert_true(v.sp_near > v.samples / 2);
	assert_int_equal(v.new_threads, 1);
	assert_true(perf_get_stats(ps)->samples >= (uint64_t)v.samples);

	perf_remove_thread(ps, gettid());
	assert_false(perf_has_thread(ps, gettid()));
	assert_int_equal(perf_nthreads(ps), 0);
	assert_int_equal(perf_add_thread(ps, getpid(), 999999999), -ESRCH);
	perf_free(ps);
}

TEST_MAIN(NULL, NULL, cmocka_unit_test(test_parse_sample), cmocka_unit_test(test_parse_truncated),
	  cmocka_unit_test(test_live_sampling))
