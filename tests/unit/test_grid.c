/* Unit tests for grid: clipping, wide characters, control characters and
 * invalid UTF-8, attributes and the row-as-text export. */
#include <errno.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/ui/grid.h"

static int setup(void **state)
{
	return setlocale(LC_CTYPE, "C.UTF-8") ? 0 : -1;
}

static const char *row(struct grid *g, int y)
{
	static char buf[1024];

	assert_true(grid_row_text(g, y, buf, sizeof(buf)) >= 0);
	return buf;
}

/* grid_put of s at (x, y) within maxw columns draws ret columns, and row y
 * then reads want. */
static void assert_put(struct grid *g, int x, int y, const char *s, int maxw, int ret,
		       const char *want)
{
	assert_int_equal(grid_put(g, x, y, s, 0, maxw), ret);
	assert_string_equal(row(g, y), want);
}

static void test_basic(void **state)
{
	struct grid g;

	assert_int_equal(grid_init(&g, 10, 3), 0);
	assert_string_equal(row(&g, 0), "");
	assert_int_equal(grid_put(&g, 2, 1, "hello", GRID_BOLD, -1), 5);
	assert_string_equal(row(&g, 1), "  hello");
	assert_int_equal(grid_at(&g, 2, 1)->attr, GRID_BOLD);
	assert_int_equal(grid_at(&g, 1, 1)->attr, 0);
	assert_null(grid_at(&g, 10, 0));
	assert_null(grid_at(&g, -1, 0));
	assert_null(grid_at(&g, 0, 3));
	assert_int_equal(grid_printf(&g, 0, 0, 0, -1, "%d-%s", 42, "x"), 4);
	assert_string_equal(row(&g, 0), "42-x");
	grid_clear(&g);
	assert_string_equal(row(&g, 1), "");
	assert_int_equal(grid_resize(&g, 4, 1), 0);
	assert_int_equal(g.w, 4);
	assert_int_equal(g.h, 1);
	grid_free(&g);
}

static void test_clip(void **state)
{
	struct grid g;

	assert_int_equal(grid_init(&g, 8, 2), 0);
	/* Right edge. */
	assert_put(&g, 5, 0, "abcdef", -1, 3, "     abc");
	/* maxw. */
	assert_put(&g, 0, 1, "abcdef", 2, 2, "ab");
	/* Left edge: the visible part lands at column 0. */
	grid_clear(&g);
	assert_put(&g, -2, 0, "abcd", -1, 4, "cd");
	/* Rows outside draw nothing. */
	assert_int_equal(grid_put(&g, 0, -1, "x", 0, -1), 0);
	assert_int_equal(grid_put(&g, 0, 2, "x", 0, -1), 0);
	/* Fill and attr clip too. */
	grid_fill(&g, -3, 1, 20, L'-', GRID_DIM);
	assert_string_equal(row(&g, 1), "--------");
	grid_attr(&g, 6, 1, 10, GRID_REVERSE);
	assert_int_equal(grid_at(&g, 5, 1)->attr, GRID_DIM);
	assert_int_equal(grid_at(&g, 7, 1)->attr, GRID_REVERSE);
	assert_int_equal(grid_at(&g, 7, 1)->ch, L'-');
	grid_free(&g);
}

static void test_wide(void **state)
{
	struct grid g;

	assert_int_equal(grid_init(&g, 6, 2), 0);
	/* 日本語 takes 6 columns. */
	assert_put(&g, 0, 0, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", -1, 6,
		   "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e");
	assert_int_equal(grid_at(&g, 1, 0)->ch, GRID_CONT);
	/* Overwriting the right half blanks the left half. */
	grid_put(&g, 3, 0, "x", 0, -1);
	assert_string_equal(row(&g, 0), "\xe6\x97\xa5 x\xe8\xaa\x9e");
	/* A wide char that would straddle the edge becomes a blank. */
	assert_put(&g, 0, 1, "abcde\xe6\x97\xa5", -1, 6, "abcde");
	assert_int_equal(grid_at(&g, 5, 1)->ch, L' ');
	/* And the same at maxw. */
	grid_clear(&g);
	assert_put(&g, 0, 1, "a\xe6\x97\xa5", 2, 2, "a");
	/* Left edge straddle. */
	grid_clear(&g);
	grid_put(&g, -1, 0, "\xe6\x97\xa5z", 0, -1);
	assert_string_equal(row(&g, 0), " z");
	/* Combining marks are dropped, not given a cell. */
	grid_clear(&g);
	assert_put(&g, 0, 0, "e\xcc\x81x", -1, 2, "ex");
	grid_free(&g);
}

static void test_control_and_invalid(void **state)
{
	struct grid g;

	assert_int_equal(grid_init(&g, 40, 1), 0);
	grid_put(&g, 0, 0,
		 "a\x1b[2Jb\tc\x7f"
		 "d\xc2\x9b"
		 "e\xff"
		 "f\xc0\xaf"
		 "g\xed\xa0\x80"
		 "h",
		 0, -1);
	assert_string_equal(row(&g, 0), "a?[2Jb?c?d?e?f??g???h");
	for (int x = 0; x < g.w; x++)
		assert_true(grid_at(&g, x, 0)->ch >= 0x20 || grid_at(&g, x, 0)->ch == GRID_CONT);
	/* Fill refuses control and wide characters. */
	grid_fill(&g, 0, 0, 2, L'\x1b', 0);
	assert_int_equal(grid_at(&g, 0, 0)->ch, L'?');
	grid_free(&g);
}

static void test_row_text(void **state)
{
	struct grid g;
	char small[4];

	assert_int_equal(grid_init(&g, 10, 1), 0);
	grid_put(&g, 0, 0, "abc  ", 0, -1);
	assert_int_equal(grid_row_text(&g, 0, small, sizeof(small)), 3);
	assert_string_equal(small, "abc");
	grid_put(&g, 0, 0, "abcdef", 0, -1);
	assert_int_equal(grid_row_text(&g, 0, small, sizeof(small)), -ENOSPC);
	assert_int_equal(grid_row_text(&g, 5, small, sizeof(small)), 0);
	grid_free(&g);
}

TEST_MAIN(setup, NULL, TEST(test_basic), TEST(test_clip), TEST(test_wide),
	  TEST(test_control_and_invalid), TEST(test_row_text))
