/*
 * spark — the one sparkline of the views: a row of cells, one value each,
 * each drawn as a block as high as the value's share of a maximum (green).
 *
 * Pure drawing into a grid (which clips); no allocation. The caller picks
 * what a cell stands for (the chart: the highest point of a group, so a
 * burst stays visible; the threads view: the mean of a slice of time) and
 * passes one value per cell; spark_draw only draws them, so a share looks
 * the same in every view.
 *
 * Glyphs: in UTF-8 the eight lower blocks ▁▂▃▄▅▆▇█ (a share s takes the
 * ceil(8 s)-th); in ASCII ". : | #" (ceil(4 s)). A share of 0.5% or less,
 * or a value < 0 or NaN (no data for that cell), stays blank; above the
 * maximum is a full cell.
 */
#ifndef STACKTOP_SPARK_H
#define STACKTOP_SPARK_H

#include <stdbool.h>
#include <wchar.h>

#include "stacktop/ui/grid.h"

/* The glyph for a share (value / max) of a cell: 0 when it stays blank. */
wchar_t spark_glyph(double share, bool utf8);

/* Draw v[0..n) against max (> 0, else nothing is drawn) in the n cells
 * from (x, y), left to right. Blank cells are not written: the caller
 * clears the row when it needs to. */
void spark_draw(struct grid *g, int x, int y, const double *v, int n, double max, bool utf8);

#endif
