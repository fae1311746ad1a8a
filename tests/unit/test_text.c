/* Unit tests for text: the UTF-8 decoder, sanitizing, widths, fitting and
 * the number formatters. */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stacktop/text.h"

static int setup(void **state)
{
	return setlocale(LC_CTYPE, "C.UTF-8") ? 0 : -1;
}

static void test_decode(void **state)
{
	uint32_t cp = 0;

	assert_int_equal(text_utf8_decode("A", &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(text_utf8_decode("", &cp), 0);
	assert_int_equal(text_utf8_decode("\xc3\xa9", &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(text_utf8_decode("\xe2\x80\xa6", &cp), 3);
	assert_int_equal(cp, 0x2026);
	assert_int_equal(text_utf8_decode("\xf0\x9f\x94\xa5", &cp), 4);
	assert_int_equal(cp, 0x1f525);
	assert_int_equal(text_utf8_decode("\xf4\x8f\xbf\xbf", &cp), 4);
	assert_int_equal(cp, 0x10ffff);
	/* Rejected: overlongs, surrogates, > U+10FFFF, stray and truncated. */
	assert_int_equal(text_utf8_decode("\xc0\xaf", &cp), -1);
	assert_int_equal(text_utf8_decode("\xc1\xbf", &cp), -1);
	assert_int_equal(text_utf8_decode("\xe0\x80\xaf", &cp), -1);
	assert_int_equal(text_utf8_decode("\xf0\x80\x80\xaf", &cp), -1);
	assert_int_equal(text_utf8_decode("\xed\xa0\x80", &cp), -1);
	assert_int_equal(text_utf8_decode("\xf4\x90\x80\x80", &cp), -1);
	assert_int_equal(text_utf8_decode("\xf5\x80\x80\x80", &cp), -1);
	assert_int_equal(text_utf8_decode("\x80", &cp), -1);
	assert_int_equal(text_utf8_decode("\xe2\x80", &cp), -1);
	assert_int_equal(text_utf8_decode("\xff", &cp), -1);
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
	char out[64];

	assert_int_equal(text_sanitize("parse_row", out, sizeof(out)), 9);
	assert_string_equal(out, "parse_row");
	text_sanitize("evil\x1b[2Jname", out, sizeof(out));
	assert_string_equal(out, "evil?[2Jname");
	text_sanitize("a\tb\nc\x7f" "d", out, sizeof(out));
	assert_string_equal(out, "a?b?c?d");
	text_sanitize("c1\xc2\x9b" "x", out, sizeof(out)); /* U+009B CSI */
	assert_string_equal(out, "c1?x");
	text_sanitize("bad\xff\xfe!", out, sizeof(out));
	assert_string_equal(out, "bad?" "?!");
	text_sanitize("trunc\xe2\x80", out, sizeof(out));
	assert_string_equal(out, "trunc??");
	text_sanitize("bidi\xe2\x80\xae" "x", out, sizeof(out)); /* U+202E */
	assert_string_equal(out, "bidi?x");
	text_sanitize("caf\xc3\xa9 \xe6\x97\xa5", out, sizeof(out));
	assert_string_equal(out, "caf\xc3\xa9 \xe6\x97\xa5");
	text_sanitize(NULL, out, sizeof(out));
	assert_string_equal(out, "");
	/* Truncation never splits a sequence: "ab" + é (2 bytes) in 4 bytes. */
	assert_int_equal(text_sanitize("ab\xc3\xa9", out, 4), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(text_sanitize("ab\xc3\xa9", out, 5), 4);
	assert_string_equal(out, "ab\xc3\xa9");
	assert_int_equal(text_sanitize("\xe6\x97\xa5\xe6\x97\xa5", out, 6), 3);
	assert_string_equal(out, "\xe6\x97\xa5");
	assert_int_equal(text_sanitize("xyz", out, 1), 0);
	assert_string_equal(out, "");
}

static void test_width_and_fit(void **state)
{
	char out[64];

	assert_int_equal(text_width("abc"), 3);
	assert_int_equal(text_width("\xe6\x97\xa5\xe6\x9c\xac"), 4); /* 日本 */
	assert_int_equal(text_width("e\xcc\x81"), 1); /* e + combining acute */
	assert_int_equal(text_width("a\x1b" "b"), 3); /* ESC shows as '?' */
	assert_int_equal(text_width(""), 0);

	assert_int_equal(text_fit("short", 10, out, sizeof(out)), 5);
	assert_string_equal(out, "short");
	assert_int_equal(text_fit("exactly10!", 10, out, sizeof(out)), 10);
	assert_string_equal(out, "exactly10!");
	assert_int_equal(text_fit("much_too_long_name", 10, out, sizeof(out)), 10);
	assert_string_equal(out, "much_too_\xe2\x80\xa6");
	/* A wide char that does not fit before the ellipsis is dropped whole. */
	assert_int_equal(text_fit("ab\xe6\x97\xa5\xe6\x97\xa5", 4, out, sizeof(out)), 3);
	assert_string_equal(out, "ab\xe2\x80\xa6");
	assert_int_equal(text_fit("\x1b[2J", 3, out, sizeof(out)), 3);
	assert_string_equal(out, "?[\xe2\x80\xa6");
	assert_int_equal(text_fit("abc", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

static void test_duration(void **state)
{
	char b[32];

	text_duration(0, b, sizeof(b));
	assert_string_equal(b, "0ns");
	text_duration(999, b, sizeof(b));
	assert_string_equal(b, "999ns");
	text_duration(1500, b, sizeof(b));
	assert_string_equal(b, "1.5us");
	text_duration(1200000, b, sizeof(b));
	assert_string_equal(b, "1.2ms");
	text_duration(999960000, b, sizeof(b)); /* rounds up into seconds */
	assert_string_equal(b, "1.0s");
	text_duration(35000000000ull, b, sizeof(b));
	assert_string_equal(b, "35.0s");
	text_duration(59940000000ull, b, sizeof(b));
	assert_string_equal(b, "59.9s");
	text_duration(59960000000ull, b, sizeof(b));
	assert_string_equal(b, "1m00s");
	text_duration(65000000000ull, b, sizeof(b));
	assert_string_equal(b, "1m05s");
	text_duration(245000000000ull, b, sizeof(b));
	assert_string_equal(b, "4m05s");
	text_duration(7800ull * 1000000000ull, b, sizeof(b));
	assert_string_equal(b, "2h10m");
	text_duration(200ull * 3600 * 1000000000ull, b, sizeof(b));
	assert_string_equal(b, "8d08h");

	text_seconds(0, b, sizeof(b));
	assert_string_equal(b, "0.0s");
	text_seconds(0.04, b, sizeof(b));
	assert_string_equal(b, "0.0s");
	text_seconds(35.0, b, sizeof(b));
	assert_string_equal(b, "35.0s");
	text_seconds(65.0, b, sizeof(b));
	assert_string_equal(b, "1m05s");
	text_seconds(-3, b, sizeof(b));
	assert_string_equal(b, "0.0s");
}

static void test_bytes_and_count(void **state)
{
	char b[32];

	text_bytes(0, b, sizeof(b));
	assert_string_equal(b, "0 B");
	text_bytes(1023, b, sizeof(b));
	assert_string_equal(b, "1023 B");
	text_bytes(740 * 1024, b, sizeof(b));
	assert_string_equal(b, "740 KiB");
	text_bytes(812ull << 20, b, sizeof(b));
	assert_string_equal(b, "812 MiB");
	text_bytes(2ull << 30, b, sizeof(b));
	assert_string_equal(b, "2.0 GiB");
	text_bytes((1ull << 20) - 1, b, sizeof(b)); /* 1023.999 KiB */
	assert_string_equal(b, "1.0 MiB");
	text_bytes(1536, b, sizeof(b));
	assert_string_equal(b, "1.5 KiB");

	text_count(0, b, sizeof(b));
	assert_string_equal(b, "0");
	text_count(999, b, sizeof(b));
	assert_string_equal(b, "999");
	text_count(1000, b, sizeof(b));
	assert_string_equal(b, "1,000");
	text_count(35412, b, sizeof(b));
	assert_string_equal(b, "35,412");
	text_count(1234567890, b, sizeof(b));
	assert_string_equal(b, "1,234,567,890");
	text_count(UINT64_MAX, b, sizeof(b));
	assert_string_equal(b, "18,446,744,073,709,551,615");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_width_and_fit),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_bytes_and_count),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
