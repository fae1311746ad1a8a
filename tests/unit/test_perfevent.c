/* Unit tests for perfevent: CPU lists, the online CPUs, the attributes of
 * the cpu-clock event in each of its settings and of memtrace's events,
 * and a real event on this thread: opened, its ring mapped and read, its
 * count and period, closed. */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/sample/perfevent.h"
#include "stacktop/sample/perfrecord.h"
#include "helpers.h"

static void test_parse_cpus(void **state)
{
	int c[8];
	assert_int_equal(perfevent_parse_cpus("0-1\n", c, 8), 2);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[1], 1);
	assert_int_equal(perfevent_parse_cpus("0,2-4,7", c, 8), 5);
	assert_int_equal(c[1], 2);
	assert_int_equal(c[3], 4);
	assert_int_equal(c[4], 7);
	assert_int_equal(perfevent_parse_cpus("3", c, 8), 1);
	assert_int_equal(c[0], 3);
	assert_int_equal(perfevent_parse_cpus("0-9", c, 8), -E2BIG);
	assert_int_equal(perfevent_parse_cpus("4-2", c, 8), -EINVAL);
	assert_int_equal(perfevent_parse_cpus("x", c, 8), -EINVAL);
	assert_int_equal(perfevent_parse_cpus("1,", c, 8), 1);
	assert_int_equal(perfevent_parse_cpus("", c, 8), 0);
}

static void test_online_cpus(void **state)
{
	int c[1024];
	int n = perfevent_online_cpus(c, 1024);
	assert_true(n >= 1);
	for (int i = 1; i < n; i++)
		assert_true(c[i] > c[i - 1]);
	/* No more than asked for. */
	assert_int_equal(perfevent_online_cpus(c, 1), 1);
}

/* Every field of the clock event, zeros too: the kernel's callchain with
 * user stacks and registers (the layout test_attr_user_stack checks), or
 * user space only, inherited and enabled at exec. */
static void test_clock_attr(void **state)
{
	struct perfevent_clock c = {.rate_hz = 1000, .stack_size = 8192, .kernel = true};
	struct perf_event_attr a, want = {.size = sizeof(want),
					  .type = PERF_TYPE_SOFTWARE,
					  .config = PERF_COUNT_SW_CPU_CLOCK,
					  .sample_period = 1000000,
					  .exclude_hv = 1,
					  .mmap = 1,
					  .mmap2 = 1,
					  .comm = 1,
					  .comm_exec = 1,
					  .task = 1,
					  .sample_id_all = 1};

	perfevent_attr_user_stack(&want, 8192);
	want.sample_type |= PERF_SAMPLE_CALLCHAIN;
	perfevent_clock_attr(&c, &a);
	assert_memory_equal(&a, &want, sizeof(a));

	/* The user's frame-pointer walk is kept without kernel frames. */
	c.kernel = false;
	c.inherit = true;
	c.enable_on_exec = true;
	want.exclude_kernel = 1;
	want.exclude_callchain_kernel = 1;
	want.inherit = 1;
	want.disabled = 1;
	want.enable_on_exec = 1;
	perfevent_clock_attr(&c, &a);
	assert_memory_equal(&a, &want, sizeof(a));
}

/* memtrace's events: the sampler's layout over whatever event it is. */
static void test_attr_user_stack(void **state)
{
	struct perf_event_attr a = {.type = PERF_TYPE_TRACEPOINT, .config = 7, .sample_period = 1};
	perfevent_attr_user_stack(&a, 4096);
	assert_int_equal(a.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(a.config, 7);
	assert_int_equal(a.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	assert_int_equal(a.sample_regs_user, PERFEVENT_REGS_MASK);
	assert_int_equal(a.sample_stack_user, 4096);
	assert_int_equal(a.clockid, CLOCK_MONOTONIC);
}

/* A cpu-clock event on this thread: its ring fills with samples of this
 * thread that perfrecord decodes, and its count grows. */
static void test_open_and_map(void **state)
{
	struct perfevent_clock c = {.rate_hz = 1000, .stack_size = 1024, .kernel = true};
	struct perfevent_ring rb = {.fd = -1};
	int fd = perfevent_open_clock(&c, gettid(), -1);
	if (fd == -EACCES || fd == -EPERM || fd == -ENOENT || fd == -ENOSYS)
		skip(); /* no perf events here */
	assert_true(fd >= 0);
	assert_true(c.kernel_probed);
	unsigned pages = 16;
	assert_int_equal(perfevent_ring_map_fit(&rb, fd, &pages), 0);
	assert_int_equal(rb.fd, fd);
	assert_true(pages >= 2 && pages <= 16);
	assert_int_equal(rb.ring.size, (uint64_t)pages * 4096);

	burn_cpu_s(0.05);
	uint64_t count = 0;
	assert_int_equal(perfevent_read_count(fd, &count), 0);
	assert_true(count > 0); /* ns of CPU time */
	assert_int_equal(perfevent_set_period(fd, 2000000), 0);

	const struct perf_event_header *h;
	struct perfrecord r;
	int samples = 0, mine = 0;
	while (ring_next(&rb.ring, &h) == 1) {
		if (perfrecord_decode(h, c.kernel, &r) || r.kind != PERFRECORD_SAMPLE)
			continue;
		samples++;
		mine += r.tid == gettid();
	}
	/* 50 ms of CPU at 1 kHz, however loaded the machine: some arrived,
	 * and every one is of this thread (the event is this thread's). */
	assert_true(samples > 0);
	assert_int_equal(mine, samples);

	/* A second event of this thread writes into the same ring; a file
	 * that is no perf event cannot be a ring. */
	int fd2 = perfevent_open_clock(&c, gettid(), -1);
	assert_true(fd2 >= 0);
	assert_int_equal(perfevent_set_output(fd2, rb.fd), 0);
	assert_true(perfevent_set_output(fd2, STDIN_FILENO) < 0);
	close(fd2);

	perfevent_ring_close(&rb);
	assert_int_equal(rb.fd, -1);
	assert_null(rb.map);
	perfevent_ring_close(&rb); /* closed twice is fine */
}

/* A ring that cannot be mapped leaves the fd to the caller. */
static void test_map_bad_fd(void **state)
{
	struct perfevent_ring rb = {.fd = -1};
	unsigned pages = 8;
	assert_true(perfevent_ring_map(&rb, -1, 8) < 0);
	assert_true(perfevent_ring_map_fit(&rb, -1, &pages) < 0);
	assert_int_equal(rb.fd, -1);
	assert_true(perfevent_open(&(struct perf_event_attr){.size = 1}, 0, -1) < 0);
	assert_true(perfevent_read_count(-1, &(uint64_t){0}) < 0);
	perfevent_ring_close(&rb);
}

TEST_MAIN(NULL, NULL, TEST(test_parse_cpus), TEST(test_online_cpus), TEST(test_clock_attr),
	  TEST(test_attr_user_stack), TEST(test_open_and_map), TEST(test_map_bad_fd))
