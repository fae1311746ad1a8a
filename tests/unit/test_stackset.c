/* Unit tests for stackset: frames interned by content, weights scaled
 * into 32 bits with light samples kept, a wait leaf made the wait frame
 * again (and the mode wall), the frame-id cap, threads and their names,
 * seconds, the summary. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/formats/stackset.h"
#include "stacktop/lib/strpool.h"
#include "stacktop/model/summary.h"
#include "stacktop/proc/waits.h"
#include "stacktop/symbols/frames.h"

struct fx {
	struct frames *fr;
	struct stackset *ss;
};

static int setup(void **state)
{
	static struct fx fx;

	if (frames_new(NULL, &fx.fr) || stackset_new(fx.fr, 8, &fx.ss))
		return -1;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	stackset_free(fx->ss);
	frames_free(fx->fr);
	return 0;
}

static uint32_t frame(struct stackset *ss, const char *func, const char *module)
{
	struct stackset_frame f = {.func = strpool_cstr(stackset_strings(ss), func),
				   .module = module};
	int64_t id = stackset_frame(ss, &f);

	assert_true(id >= 0);
	return (uint32_t)id;
}

static void test_stacks(void **state)
{
	struct fx *fx = *state;
	struct stackset *ss = fx->ss;
	struct stackset_stack st;
	uint32_t a = frame(ss, "main", NULL), b = frame(ss, "work", NULL);
	uint64_t max = 3ull * UINT32_MAX, scale = stackset_scale(max);

	assert_int_equal(frame(ss, "main", NULL), a); /* by content */
	assert_int_equal(stackset_scale(UINT32_MAX), 1);
	assert_int_equal(scale, 4);
	assert_int_equal(stackset_add(ss, 7, 0, (uint32_t[]){a, b}, 2, max, scale), 0);
	/* too light to show once scaled, still one sample */
	assert_int_equal(stackset_add(ss, STACKSET_TID_ANY, 1, (uint32_t[]){a}, 1, 1, scale), 0);
	/* nothing stored: no count, no frames */
	assert_int_equal(stackset_add(ss, 7, 2, (uint32_t[]){a}, 1, 0, 1), 0);
	assert_int_equal(stackset_add(ss, 7, 2, NULL, 0, 5, 1), 0);
	assert_int_equal(stackset_nstacks(ss), 2);
	stackset_stack(ss, 0, &st);
	assert_int_equal(st.n, 2);
	assert_int_equal(st.ids[1], b);
	assert_int_equal(st.weight, max / 4);
	assert_int_equal(st.tid, 7);
	assert_int_equal(stackset_samples(ss), max / 4 + 1);
	assert_true(stackset_timed(ss));
	assert_int_equal(stackset_add(ss, 7, -1, (uint32_t[]){b}, 1, 1, 1), 0);
	assert_false(stackset_timed(ss));
	/* the cap (8 ids here): 4 used, 5 more are too many */
	assert_int_equal(stackset_add(ss, 7, -1, (uint32_t[]){a, a, a, a, a}, 5, 1, 1), -EFBIG);
	assert_int_equal(stackset_max_ids(ss), 8);
	assert_int_equal(stackset_ids_limit(0), 1u << 20);
	assert_int_equal(stackset_ids_limit(100), 100 * 8 + (1u << 20));
	assert_int_equal(stackset_ids_limit(SIZE_MAX / 2), 1u << 25);
}

static void test_threads(void **state)
{
	struct fx *fx = *state;
	struct stackset *ss = fx->ss;
	uint32_t a = frame(ss, "main", NULL);

	assert_int_equal(stackset_thread(ss, 42, NULL), 0);
	assert_int_equal(stackset_thread(ss, 42, "worker"), 0); /* named when known */
	assert_int_equal(stackset_thread(ss, 42, "other"), 0);	/* first name stays */
	assert_int_equal(stackset_add(ss, 42, -1, (uint32_t[]){a}, 1, 1, 1), 0);
	assert_int_equal(stackset_add(ss, STACKSET_TID_ANY, -1, (uint32_t[]){a}, 1, 1, 1), 0);
	assert_int_equal(stackset_nthreads(ss), 2);
	assert_true(stackset_has_thread(ss, 42));
	assert_false(stackset_has_thread(ss, 43));
	assert_string_equal(stackset_thread_name(ss, 42), "worker");
	assert_string_equal(stackset_thread_name(ss, STACKSET_TID_ANY), "all");
	assert_null(stackset_thread_name(ss, 43));
	assert_null(stackset_thread_name(NULL, 42));
}

static void test_wait_leaf(void **state)
{
	struct fx *fx = *state;
	struct stackset *ss = fx->ss;
	struct stackset_stack st;
	uint32_t a = frame(ss, "main", NULL);
	uint32_t w = frame(ss, waits_frame_name(SAMPLE_WAIT_SLEEP), "[wait]");
	uint32_t not_wait = frame(ss, "[sleep]", "libc.so.6");

	assert_null(stackset_mode(ss));
	assert_int_equal(stackset_add(ss, 1, -1, (uint32_t[]){a, not_wait}, 2, 1, 1), 0);
	assert_null(stackset_mode(ss));
	assert_int_equal(stackset_add(ss, 1, -1, (uint32_t[]){a, w}, 2, 1, 1), 0);
	stackset_stack(ss, 1, &st);
	assert_int_equal(st.ids[1], frames_wait(fx->fr, SAMPLE_WAIT_SLEEP));
	assert_string_equal(stackset_mode(ss), "wall");
	/* a mode the file said first stays */
	stackset_set_mode(ss, "cpu");
	assert_int_equal(stackset_add(ss, 1, -1, (uint32_t[]){a, w}, 2, 1, 1), 0);
	assert_string_equal(stackset_mode(ss), "cpu");
}

static void test_facts(void **state)
{
	struct fx *fx = *state;
	struct stackset *ss = fx->ss;
	struct summary sum = {
	    .wall_s = 2, .cpu_s = 1, .avg_cpu = 50, .peak_cpu = 90, .peak_rss = 7};

	assert_int_equal(stackset_format(ss), STACKSET_FOLDED);
	assert_null(stackset_summary(ss));
	assert_true(stackset_period_s(ss) == 0 && stackset_duration_s(ss) == 0);
	stackset_set_format(ss, STACKSET_SPEEDSCOPE);
	stackset_set_period_s(ss, 0.01);
	stackset_set_duration_s(ss, 3);
	stackset_set_summary(ss, &sum);
	assert_int_equal(stackset_format(ss), STACKSET_SPEEDSCOPE);
	assert_true(stackset_period_s(ss) == 0.01 && stackset_duration_s(ss) == 3);
	assert_non_null(stackset_summary(ss));
	assert_int_equal(stackset_summary(ss)->peak_rss, 7);
}

TEST_MAIN(NULL, NULL, TEST_FX(test_stacks), TEST_FX(test_threads), TEST_FX(test_wait_leaf),
	  TEST_FX(test_facts))
