/* test_spark — the one sparkline: glyphs by share, blanks, clipping. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/ui/grid.h"
#include "stacktop/ui/spark.h"

static void test_glyphs(void **state)
{
	/* eighths in UTF-8, ceil: any share above 0.5% is at least ▁ */
	assert_int_equal(spark_glyph(0, true), 0);
	assert_int_equal(spark_glyph(0.005, true), 0);
	assert_int_equal(spark_glyph(0.006, true), 0x2581);
	assert_int_equal(spark_glyph(0.125, true), 0x2581);
	assert_int_equal(spark_glyph(0.375, true), 0x2583); /* exactly 3/8: the third */
	assert_int_equal(spark_glyph(0.31, true), 0x2583);
	assert_int_equal(spark_glyph(1, true), 0x2588);
	assert_int_equal(spark_glyph(7.5, true), 0x2588); /* above the maximum: full */
	/* quarters in ASCII */
	assert_int_equal(spark_glyph(0.1, false), L'.');
	assert_int_equal(spark_glyph(0.3, false), L':');
	assert_int_equal(spark_glyph(0.6, false), L'|');
	assert_int_equal(spark_glyph(0.9, false), L'#');
	assert_int_equal(spark_glyph(NAN, false), 0);
	assert_int_equal(spark_glyph(-1, true), 0);
}

static void test_draw(void **state)
{
	const double v[] = {0, 10, -1, NAN, 30, 60, 100, 250};
	struct grid g;
	char buf[64];

	assert_int_equal(grid_init(&g, 12, 3), 0);
	spark_draw(&g, 1, 0, v, 8, 100, false);
	grid_row_text(&g, 0, buf, sizeof(buf));
	assert_string_equal(buf, "  .  :|##");
	assert_int_equal(GRID_COLOR_OF(grid_at(&g, 2, 0)->attr), GRID_C_GREEN);
	/* the grid clips: from x 8, only 4 cells fit */
	spark_draw(&g, 8, 1, v + 4, 4, 100, true);
	grid_row_text(&g, 1, buf, sizeof(buf));
	assert_string_equal(buf, "        \u2583\u2585\u2588\u2588");
	/* no maximum: nothing */
	spark_draw(&g, 0, 2, v, 8, 0, true);
	spark_draw(&g, -3, 2, v, 8, NAN, true);
	grid_row_text(&g, 2, buf, sizeof(buf));
	assert_string_equal(buf, "");
	spark_draw(NULL, 0, 0, v, 8, 1, true);
	grid_free(&g);
}

TEST_MAIN(NULL, NULL, TEST(test_glyphs), TEST(test_draw))
