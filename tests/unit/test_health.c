/*
 * test_health — the achieved rate and the header's one warning from
 * counters measured once per refresh, in the order health.h gives:
 * sampling behind, lost, busy, traced, kernel hidden (first refresh only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/app/health.h"

#define SEC 1000000000ull
#define T0 (100 * SEC)

/* Refreshes one second apart, with counters that grow by what is asked. */
struct run {
	struct health h;
	struct health_input in;
	uint64_t now;
};

static void start(struct run *r)
{
	*r = (struct run){.now = T0};
	health_init(&r->h, r->now);
}

/* One refresh a second later: samples and lost grow by ds and dl, busy
 * for busy_ms of it. Returns the warning. */
static enum view_warning refresh(struct run *r, uint64_t ds, uint64_t dl, uint64_t busy_ms)
{
	r->in.samples += ds;
	r->in.lost += dl;
	r->now += SEC;
	health_busy(&r->h, busy_ms * 1000000ull);
	health_measure(&r->h, &r->in, r->now);
	return r->h.warning;
}

/* One refresh of a run: what grows (as refresh() takes it) and the warning
 * it must give. */
struct step {
	uint64_t ds, dl, busy_ms;
	enum view_warning want;
};

static void run_steps(struct run *r, const struct step *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		enum view_warning got = refresh(r, s[i].ds, s[i].dl, s[i].busy_ms);

		if (got != s[i].want)
			fail_msg("step %zu: warning %d, expected %d", i, (int)got, (int)s[i].want);
	}
}

/* Refreshes of r, each {ds, dl, busy_ms, warning}, in order. */
#define STEPS(r, ...)                                                                              \
	run_steps((r), (const struct step[]){__VA_ARGS__},                                         \
		  sizeof((const struct step[]){__VA_ARGS__}) / sizeof(struct step))

static void test_achieved_rate(void **state)
{
	struct run r;

	start(&r);
	assert_int_equal(refresh(&r, 99, 0, 0), VIEW_WARNING_NONE);
	assert_float_equal(r.h.achieved_hz, 99.0, 1e-9);
	/* Half a second later, 200 more: 400/s. */
	r.in.samples += 200;
	r.now += SEC / 2;
	health_measure(&r.h, &r.in, r.now);
	assert_float_equal(r.h.achieved_hz, 400.0, 1e-9);
	/* A refresh too soon after the last (under 50 ms) keeps the rate. */
	r.in.samples += 1000;
	r.now += SEC / 100;
	health_measure(&r.h, &r.in, r.now);
	assert_float_equal(r.h.achieved_hz, 400.0, 1e-9);
}

static void test_behind_after_three(void **state)
{
	struct run r;

	start(&r);
	r.in.expected_hz = 1000;
	STEPS(&r, {100, 0, 0, VIEW_WARNING_NONE}, {100, 0, 0, VIEW_WARNING_NONE},
	      {100, 0, 0, VIEW_WARNING_SAMPLING_BEHIND}, {100, 0, 0, VIEW_WARNING_SAMPLING_BEHIND});
	/* One good refresh starts the count again. */
	STEPS(&r, {900, 0, 0, VIEW_WARNING_NONE}, {100, 0, 0, VIEW_WARNING_NONE},
	      {100, 0, 0, VIEW_WARNING_NONE}, {100, 0, 0, VIEW_WARNING_SAMPLING_BEHIND});
}

static void test_behind_needs_expected(void **state)
{
	struct run r;

	start(&r);
	/* Unknown (0) or tiny expected rates never call it behind. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(refresh(&r, 0, 0, 0), VIEW_WARNING_NONE);
	r.in.expected_hz = 15;
	for (int i = 0; i < 4; i++)
		assert_int_equal(refresh(&r, 0, 0, 0), VIEW_WARNING_NONE);
	/* 60% of the expected rate is enough. */
	r.in.expected_hz = 100;
	for (int i = 0; i < 4; i++)
		assert_int_equal(refresh(&r, 60, 0, 0), VIEW_WARNING_NONE);
}

static void test_lost(void **state)
{
	struct run r;

	start(&r);
	assert_int_equal(refresh(&r, 99, 7, 0), VIEW_WARNING_LOST);
	assert_int_equal(r.h.lost_recent, 7);
	/* Nothing new lost: the warning goes. */
	assert_int_equal(refresh(&r, 99, 0, 0), VIEW_WARNING_NONE);
}

static void test_busy(void **state)
{
	struct run r;

	start(&r);
	STEPS(&r, {99, 0, 600, VIEW_WARNING_BUSY}, {99, 0, 400, VIEW_WARNING_NONE});
	/* Busy time is per interval: two refreshes of 300 ms are not busy. */
	STEPS(&r, {99, 0, 300, VIEW_WARNING_NONE}, {99, 0, 300, VIEW_WARNING_NONE});
}

/* The first refresh's span holds start-up (symbol tables, first unwinds):
 * busy then is no "behind" (issue 24 item 4); the same later is. */
static void test_busy_not_first(void **state)
{
	struct run r;

	start(&r);
	r.in.first = true;
	STEPS(&r, {99, 0, 900, VIEW_WARNING_NONE});
	r.in.first = false;
	STEPS(&r, {99, 0, 900, VIEW_WARNING_BUSY});
}

static void test_traced(void **state)
{
	struct run r;

	start(&r);
	r.in.tracer = 4321;
	assert_int_equal(refresh(&r, 99, 0, 0), VIEW_WARNING_TRACED);
	r.in.tracer = 0;
	assert_int_equal(refresh(&r, 99, 0, 0), VIEW_WARNING_NONE);
}

static void test_kernel_first_only(void **state)
{
	struct run r;

	start(&r);
	r.in.kernel_denied = true;
	r.in.first = true;
	assert_int_equal(refresh(&r, 99, 0, 0), VIEW_WARNING_KERNEL_HIDDEN);
	r.in.first = false;
	assert_int_equal(refresh(&r, 99, 0, 0), VIEW_WARNING_NONE);
}

/* One record lost among hundreds is not a warning (issue 17 item 7). */
static void test_lost_threshold(void **state)
{
	struct run r;

	start(&r);
	STEPS(&r, {290, 1, 0, VIEW_WARNING_NONE}, {290, 2, 0, VIEW_WARNING_NONE},
	      {290, 3, 0, VIEW_WARNING_LOST});
}

/* The cause of a shortfall decides the advice (issue 17 item 2). */
static void test_behind_cause(void **state)
{
	struct run r;

	start(&r);
	r.in.expected_hz = 1000;
	refresh(&r, 100, 0, 0);
	assert_int_equal(r.h.cause, VIEW_BEHIND_UNKNOWN);
	r.in.misses_short_threads = true;
	refresh(&r, 100, 0, 0);
	assert_int_equal(r.h.cause, VIEW_BEHIND_SHORT_THREADS);
	r.in.kernel_denied = true;
	refresh(&r, 100, 0, 0);
	assert_int_equal(r.h.warning, VIEW_WARNING_SAMPLING_BEHIND);
	assert_int_equal(r.h.cause, VIEW_BEHIND_KERNEL);
	r.in.kernel_denied = r.in.misses_short_threads = false;
	refresh(&r, 100, 0, 300);
	assert_int_equal(r.h.cause, VIEW_BEHIND_SLOW);
}

/* Everything at once: each warning hides the ones after it. */
static void test_priority(void **state)
{
	struct run r;

	start(&r);
	r.in.expected_hz = 1000;
	r.in.tracer = 4321;
	r.in.kernel_denied = r.in.first = true;
	STEPS(&r, {10, 5, 900, VIEW_WARNING_LOST}, {10, 5, 900, VIEW_WARNING_LOST},
	      {10, 5, 900, VIEW_WARNING_SAMPLING_BEHIND});
	r.in.expected_hz = 0;
	STEPS(&r, {10, 5, 900, VIEW_WARNING_LOST});
	r.in.first = false; /* busy is never said of the first refresh */
	STEPS(&r, {10, 0, 900, VIEW_WARNING_BUSY}, {10, 0, 0, VIEW_WARNING_TRACED});
	r.in.tracer = 0;
	r.in.first = true;
	assert_int_equal(refresh(&r, 10, 0, 0), VIEW_WARNING_KERNEL_HIDDEN);
}

/* What the header shows of a measure (status.c copies these). */
static void test_measured_numbers(void **state)
{
	struct run r;

	start(&r);
	r.in.expected_hz = 500;
	r.in.tracer = 4321;
	refresh(&r, 100, 0, 0);
	refresh(&r, 100, 0, 0);
	refresh(&r, 100, 3, 0);
	assert_int_equal(r.h.warning, VIEW_WARNING_SAMPLING_BEHIND);
	r.now += SEC / 2;
	r.in.samples += 60;
	health_measure(&r.h, &r.in, r.now);
	assert_int_equal(r.h.warning, VIEW_WARNING_SAMPLING_BEHIND);
	assert_float_equal(r.h.achieved_hz, 120.0, 1e-9);
	assert_float_equal(r.h.expected_hz, 500.0, 1e-9);
	assert_float_equal(r.h.span_s, 0.5, 1e-9);
	assert_int_equal(r.h.lost_recent, 0);
	assert_int_equal(r.h.tracer, 4321);
	/* The lost count of one refresh. */
	refresh(&r, 1000, 9, 0);
	assert_int_equal(r.h.lost_recent, 9);
	assert_float_equal(r.h.span_s, 1.0, 1e-9);
}

TEST_MAIN(NULL, NULL, TEST(test_achieved_rate), TEST(test_behind_after_three),
	  TEST(test_behind_needs_expected), TEST(test_lost), TEST(test_busy),
	  TEST(test_busy_not_first), TEST(test_traced), TEST(test_kernel_first_only),
	  TEST(test_priority), TEST(test_measured_numbers), TEST(test_lost_threshold),
	  TEST(test_behind_cause))
