/*
 * view_chart — CPU and memory charts, the alerts line and sparklines, drawn
 * into a rectangle of a grid (pure; no curses).
 */
#ifndef STACKTOP_VIEW_CHART_H
#define STACKTOP_VIEW_CHART_H

#include <stdbool.h>

#include "stacktop/grid.h"
#include "stacktop/metrics.h"
#include "stacktop/series.h"

int view_chart_cpu(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8);
int view_chart_mem(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8);
int view_alerts_render(struct grid *g, int y, const struct metrics *m);
void view_sparkline(struct grid *g, int x, int y, int w, const struct series *s, double max,
		    bool utf8);

#endif
