/* Unit tests for summary: the text a file carries, read back; fields in
 * any order; a missing, negative or non-numeric field refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/model/summary.h"

static int parse(const char *s, struct summary *out)
{
	return summary_parse(s, strlen(s), out);
}

static void test_round_trip(void **state)
{
	struct summary s = {.wall_s = 51.1,
			    .cpu_s = 34.7,
			    .avg_cpu = 67.9,
			    .peak_cpu = 120,
			    .peak_rss = 12582912},
		       back;
	char buf[256];

	summary_text(&s, buf, sizeof(buf));
	assert_string_equal(buf, "wall_s=51.100 cpu_s=34.700 avg_cpu=67.9 peak_cpu=120.0 "
				 "peak_rss=12582912");
	assert_int_equal(parse(buf, &back), 0);
	assert_true(back.wall_s == 51.1 && back.cpu_s == 34.7 && back.peak_cpu == 120);
	assert_int_equal(back.peak_rss, 12582912);
}

static void test_parse(void **state)
{
	struct summary s = {.wall_s = -1};

	assert_int_equal(parse("peak_rss=1 avg_cpu=2 wall_s=3 cpu_s=4 peak_cpu=5 extra=9", &s), 0);
	assert_true(s.wall_s == 3 && s.avg_cpu == 2 && s.peak_rss == 1);
	s.wall_s = -1;
	assert_int_equal(parse("wall_s=3 cpu_s=4 avg_cpu=2 peak_cpu=5", &s), -EINVAL);
	assert_int_equal(parse("wall_s=-3 cpu_s=4 avg_cpu=2 peak_cpu=5 peak_rss=1", &s), -EINVAL);
	assert_int_equal(parse("wall_s=x cpu_s=4 avg_cpu=2 peak_cpu=5 peak_rss=1", &s), -EINVAL);
	assert_int_equal(parse("wall_s=nan cpu_s=4 avg_cpu=2 peak_cpu=5 peak_rss=1", &s), -EINVAL);
	assert_true(s.wall_s == -1); /* untouched on error */
	char longer[300];
	memset(longer, 'a', sizeof(longer));
	assert_int_equal(summary_parse(longer, sizeof(longer), &s), -EINVAL);
}

TEST_MAIN(NULL, NULL, TEST(test_round_trip), TEST(test_parse))
