/*
 * view_chart — CPU and memory charts, the alerts line and sparklines, drawn
 * into a rectangle of a grid (pure; no curses).
 *
 * Every function draws only inside its rectangle (x, y, w, h), reads the
 * metrics' series and readings (metrics_eval must have run), and keeps no
 * state. utf8 selects block characters (▁..█, ╌, ═) over the ASCII set
 * (". : #", "- - -" baseline, '_' floor, '=' limit). Returns 0, or -EINVAL
 * for a NULL grid or metrics, -ENOMEM.
 */
#ifndef STACKTOP_VIEW_CHART_H
#define STACKTOP_VIEW_CHART_H

#include <stdbool.h>

#include "stacktop/grid.h"
#include "stacktop/metrics.h"
#include "stacktop/series.h"

/* Process CPU over the window, right edge = now, scale from 0 labelled in
 * %core, baseline and floor markers, "now/peak/base/floor" on the right, the
 * time axis on the last row. h >= 3 for a chart (2 plot rows + the axis);
 * h 1..2: a numbers line (and a sparkline). */
int view_chart_cpu(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8);
/* The memory verdict ("MEM 812 MiB RSS (anon ..)  +96 MiB/h, no drops in
 * 14m: STAIRS, leak suspected"), the limit line when there is room (h 2..3
 * or >= 6), and with h >= 4 an RSS chart with the limit line when it fits. */
int view_chart_mem(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8);
/* One full-width line in GRID_C_ALERT with metrics_alerts_text: 1 if
 * drawn, 0 when no alert holds (nothing drawn). */
int view_alerts_render(struct grid *g, int y, const struct metrics *m);
/* One row of w cells, newest point on the right, each cell the maximum of
 * its group of points when there are more points than cells; max <= 0:
 * the series' own maximum. */
void view_sparkline(struct grid *g, int x, int y, int w, const struct series *s, double max,
		    bool utf8);

#endif
