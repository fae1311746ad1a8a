/* Unit tests for summary: the text a file carries, read back; fields in
 * any order; a missing, negative or non-numeric field refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/sbuf.h"
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

/* The per-second CPU (report's rhythm): the newest SUMMARY_CPU_MAX values
 * with one decimal, read back; a bad value, an empty item, a trailing
 * comma or too many refused. */
static void test_cpu(void **state)
{
	static double v[SUMMARY_CPU_MAX + 10], back[SUMMARY_CPU_MAX];
	struct sbuf b = {0};

	(void)state;
	for (size_t i = 0; i < SUMMARY_CPU_MAX + 10; i++)
		v[i] = i % 5 < 2 ? 100 : 5.25;
	v[SUMMARY_CPU_MAX + 9] = -3; /* as 0 */
	summary_cpu_text(v, SUMMARY_CPU_MAX + 10, &b);
	assert_false(b.oom);
	assert_true(!strncmp(b.p, "cpu_1s=100.0,100.0,5.2,5.2,5.2,100.0,", 37)); /* from value 10 */
	assert_int_equal(summary_cpu_parse(b.p, b.n, back), SUMMARY_CPU_MAX);
	assert_true(back[2] > 5.1 && back[2] < 5.3 && back[0] == 100 &&
		    back[SUMMARY_CPU_MAX - 1] == 0);
	free(b.p);
	static const char *const badv[] = {"cpu_1s=",	"cpu_1s=1,,2", "cpu_1s=1,2,", "cpu_1s=1,x",
					   "cpu_1s=-1", "cpu_1s=nan",  "cpu_1s=2e6",  "cpu=1,2"};
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++)
		assert_int_equal(summary_cpu_parse(badv[i], strlen(badv[i]), back), -EINVAL);
	assert_int_equal(summary_cpu_parse("cpu_1s=1,2.5", 12, back), 2);
	struct sbuf big = {0};
	sbuf_str(&big, "cpu_1s=1");
	for (size_t i = 0; i < SUMMARY_CPU_MAX; i++)
		sbuf_str(&big, ",1");
	assert_int_equal(summary_cpu_parse(big.p, big.n, back), -EINVAL);
	free(big.p);
}

/* cpu_1s_at: any second within the bound comes back; anything else, from
 * a hostile file, is refused. */
static void test_cpu_at(void **state)
{
	static const int64_t good[] = {0, -5, 1799, SUMMARY_CPU_AT_MAX, -SUMMARY_CPU_AT_MAX};
	static const char *const bad[] = {"cpu_1s_at=",		 "cpu_1s_at= 5",
					  "cpu_1s_at=+5",	 "cpu_1s_at=5x",
					  "cpu_1s_at=100000001", "cpu_1s=5",
					  "cpu_1s_at=1e3",	 "cpu_1s_at=99999999999999999999"};
	char buf[64];
	int64_t at;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		summary_cpu_at_text(good[i], buf, sizeof(buf));
		assert_int_equal(summary_cpu_at_parse(buf, strlen(buf), &at), 0);
		assert_true(at == good[i]);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(summary_cpu_at_parse(bad[i], strlen(bad[i]), &at), -EINVAL);
}

TEST_MAIN(NULL, NULL, TEST(test_round_trip), TEST(test_parse), TEST(test_cpu), TEST(test_cpu_at))
