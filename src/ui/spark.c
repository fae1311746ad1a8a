/*
 * spark — the one sparkline of the views (see spark.h).
 *
 * ceil, not round: any share above the blank threshold takes at least the
 * lowest block, so a short burst on an idle line is never drawn as nothing;
 * the epsilon keeps an exact 3/8 on the third block, not the fourth.
 */
#include "stacktop/ui/spark.h"

#include <math.h>

#define SPARK_BLANK 0.005 /* a share at or below this draws nothing */

wchar_t spark_glyph(double share, bool utf8)
{
	static const char ascii[] = ".:|#";
	static const wchar_t blocks[] = L"\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588";
	int levels = utf8 ? 8 : 4, lvl;

	if (!(share > SPARK_BLANK)) /* NaN too */
		return 0;
	if (share > 1)
		share = 1;
	lvl = (int)ceil(share * levels - 1e-9);
	lvl = lvl < 1 ? 1 : lvl > levels ? levels : lvl;
	return utf8 ? blocks[lvl - 1] : (wchar_t)ascii[lvl - 1];
}

void spark_draw(struct grid *g, int x, int y, const double *v, int n, double max, bool utf8)
{
	if (!g || !v || !(max > 0))
		return;
	for (int i = 0; i < n; i++) {
		wchar_t ch = v[i] >= 0 ? spark_glyph(v[i] / max, utf8) : 0;

		if (ch)
			grid_fill(g, x + i, y, 1, ch, GRID_COLOR(GRID_C_GREEN));
	}
}
