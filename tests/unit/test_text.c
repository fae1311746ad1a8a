/* Unit tests for text: the UTF-8 decoder, sanitizing, widths, fitting and
 * the number formatters. */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/text.h"

static int setup(void **state)
{
	return setlocale(LC_CTYPE, "C.UTF-8") ? 0 : -1;
}

static void test_decode(void **state)
{
	/* len: what text_utf8_decode returns; cp checked when len > 0. */
	static const struct {
		const char *in;
		int len;
		uint32_t cp;
	} cases[] = {
	    {"A", 1, 'A'},
	    {"", 0, 0},
	    {"\xc3\xa9", 2, 0xe9},
	    {"\xe2\x80\xa6", 3, 0x2026},
	    {"\xf0\x9f\x94\xa5", 4, 0x1f525},
	    {"\xf4\x8f\xbf\xbf", 4, 0x10ffff},
	    /* Rejected: overlongs, surrogates, > U+10FFFF, stray and truncated. */
	    {"\xc0\xaf", -1, 0},
	    {"\xc1\xbf", -1, 0},
	    {"\xe0\x80\xaf", -1, 0},
	    {"\xf0\x80\x80\xaf", -1, 0},
	    {"\xed\xa0\x80", -1, 0},
	    {"\xf4\x90\x80\x80", -1, 0},
	    {"\xf5\x80\x80\x80", -1, 0},
	    {"\x80", -1, 0},
	    {"\xe2\x80", -1, 0},
	    {"\xff", -1, 0},
	};
	uint32_t cp = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(text_utf8_decode(cases[i].in, &cp), cases[i].len);
		if (cases[i].len > 0)
			assert_int_equal(cp, cases[i].cp);
	}
	/* Round trip through the encoder. */
	char enc[4];
	uint32_t cps[] = {0x41, 0xe9, 0x7ff, 0x800, 0xffff, 0x10000, 0x10ffff};
	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		char buf[5] = {0};
		int n = text_utf8_encode(cps[i], enc);
		memcpy(buf, enc, (size_t)n);
		assert_int_equal(text_utf8_decode(buf, &cp), n);
		assert_int_equal(cp, cps[i]);
	}
}

static void test_sanitize(void **state)
{
	/* size 0: the whole buffer. The return is the length written. */
	static const struct {
		const char *in;
		size_t size;
		const char *out;
	} cases[] = {
	    {"parse_row", 0, "parse_row"},
	    {"evil\x1b[2Jname", 0, "evil?[2Jname"},
	    {"a\tb\nc\x7f"
	     "d",
	     0, "a?b?c?d"},
	    {"c1\xc2\x9b"
	     "x",
	     0, "c1?x"}, /* U+009B CSI */
	    {"bad\xff\xfe!", 0,
	     "bad?"
	     "?!"},
	    {"trunc\xe2\x80", 0, "trunc??"},
	    {"bidi\xe2\x80\xae"
	     "x",
	     0, "bidi?x"}, /* U+202E */
	    {"lrm\xe2\x80\x8e"
	     "rlm\xe2\x80\x8f"
	     "alm\xd8\x9c"
	     "x",
	     0, "lrm?rlm?alm?x"}, /* U+200E, U+200F, U+061C: direction marks */
	    {"caf\xc3\xa9 \xe6\x97\xa5", 0, "caf\xc3\xa9 \xe6\x97\xa5"},
	    {NULL, 0, ""},
	    /* Truncation never splits a sequence: "ab" + é (2 bytes) in 4 bytes. */
	    {"ab\xc3\xa9", 4, "ab"},
	    {"ab\xc3\xa9", 5, "ab\xc3\xa9"},
	    {"\xe6\x97\xa5\xe6\x97\xa5", 6, "\xe6\x97\xa5"},
	    {"xyz", 1, ""},
	};
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t size = cases[i].size ? cases[i].size : sizeof(out);

		assert_int_equal(text_sanitize(cases[i].in, out, size), strlen(cases[i].out));
		assert_string_equal(out, cases[i].out);
	}
}

static void test_width_and_fit(void **state)
{
	static const struct {
		const char *in;
		int width;
	} widths[] = {
	    {"abc", 3},
	    {"\xe6\x97\xa5\xe6\x9c\xac", 4}, /* 日本 */
	    {"e\xcc\x81", 1},		     /* e + combining acute */
	    {"a\x1b"
	     "b",
	     3}, /* ESC shows as '?' */
	    {"", 0},
	};
	static const struct {
		const char *in;
		int width, ret;
		const char *out;
	} fits[] = {
	    {"short", 10, 5, "short"},
	    {"exactly10!", 10, 10, "exactly10!"},
	    {"much_too_long_name", 10, 10, "much_too_\xe2\x80\xa6"},
	    /* A wide char that does not fit before the ellipsis is dropped whole. */
	    {"ab\xe6\x97\xa5\xe6\x97\xa5", 4, 3, "ab\xe2\x80\xa6"},
	    {"\x1b[2J", 3, 3, "?[\xe2\x80\xa6"},
	    {"abc", 0, 0, ""},
	};
	char out[64];

	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++)
		assert_int_equal(text_width(widths[i].in), widths[i].width);
	for (size_t i = 0; i < sizeof(fits) / sizeof(fits[0]); i++) {
		assert_int_equal(text_fit(fits[i].in, fits[i].width, out, sizeof(out)),
				 fits[i].ret);
		assert_string_equal(out, fits[i].out);
	}
}

/* One formatter of a uint64_t, a value and what it must print. */
struct fmt_case {
	void (*fmt)(uint64_t v, char *out, size_t size);
	uint64_t v;
	const char *want;
};

static void check_formats(const struct fmt_case *c, size_t n)
{
	char b[32];

	for (size_t i = 0; i < n; i++) {
		c[i].fmt(c[i].v, b, sizeof(b));
		assert_string_equal(b, c[i].want);
	}
}

static void test_duration(void **state)
{
	static const struct fmt_case cases[] = {
	    {text_duration, 0, "0ns"},
	    {text_duration, 999, "999ns"},
	    {text_duration, 1500, "1.5us"},
	    {text_duration, 1200000, "1.2ms"},
	    {text_duration, 999960000, "1.0s"}, /* rounds up into seconds */
	    {text_duration, 35000000000ull, "35.0s"},
	    {text_duration, 59940000000ull, "59.9s"},
	    {text_duration, 59960000000ull, "1m00s"},
	    {text_duration, 65000000000ull, "1m05s"},
	    {text_duration, 245000000000ull, "4m05s"},
	    {text_duration, 7800ull * 1000000000ull, "2h10m"},
	    {text_duration, 200ull * 3600 * 1000000000ull, "8d08h"},
	};
	static const struct {
		double s;
		const char *want;
	} secs[] = {
	    {0, "0.0s"}, {0.04, "0.0s"}, {35.0, "35.0s"}, {65.0, "1m05s"}, {-3, "0.0s"},
	};
	char b[32];

	check_formats(cases, sizeof(cases) / sizeof(cases[0]));
	for (size_t i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		text_seconds(secs[i].s, b, sizeof(b));
		assert_string_equal(b, secs[i].want);
	}
	/* whole seconds: how long a thread has been stuck */
	text_span(12.4, b, sizeof(b));
	assert_string_equal(b, "12s");
	text_span(60, b, sizeof(b));
	assert_string_equal(b, "1m00s");
	text_span(245, b, sizeof(b));
	assert_string_equal(b, "4m05s");
	text_span(-1, b, sizeof(b));
	assert_string_equal(b, "0s");
}

static void test_bytes_and_count(void **state)
{
	static const struct fmt_case cases[] = {
	    {text_bytes, 0, "0 B"},
	    {text_bytes, 1023, "1023 B"},
	    {text_bytes, 740 * 1024, "740 KiB"},
	    {text_bytes, 812ull << 20, "812 MiB"},
	    {text_bytes, 2ull << 30, "2.0 GiB"},
	    {text_bytes, (1ull << 20) - 1, "1.0 MiB"}, /* 1023.999 KiB */
	    {text_bytes, 1536, "1.5 KiB"},
	    {text_count, 0, "0"},
	    {text_count, 999, "999"},
	    {text_count, 1000, "1,000"},
	    {text_count, 35412, "35,412"},
	    {text_count, 1234567890, "1,234,567,890"},
	    {text_count, UINT64_MAX, "18,446,744,073,709,551,615"},
	};

	check_formats(cases, sizeof(cases) / sizeof(cases[0]));
}

TEST_MAIN(setup, NULL, TEST(test_decode), TEST(test_sanitize), TEST(test_width_and_fit),
	  TEST(test_duration), TEST(test_bytes_and_count))
