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
#include <stddef.h>

#include "stacktop/ui/grid.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/proc/series.h"

/* Process CPU over the window, right edge = now, scale from 0 labelled in
 * %core, baseline and floor markers, "now/peak/base/floor" on the right, the
 * time axis on the last row. h >= 3 for a chart (2 plot rows + the axis);
 * h 1..2: a numbers line (and a sparkline). */
int view_chart_cpu(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8);
/* The memory verdict ("MEM 812 MiB RSS (anon ..)  +96 MiB/h, no drops in
 * 14m: STAIRS, leak suspected"), the limit line when there is room (h 2..3
 * or >= 6), and with h >= 4 an RSS chart with the limit line when it fits. */
int view_chart_mem(struct grid *g, int x, int y, int w, int h, const struct metrics *m, bool utf8);
/* The same, saying the chart is of the whole process (the views are
 * narrowed to one thread, the charts are not): "process-wide" on the
 * CPU chart's time axis, "CPU (process)" and "MEM
 * (process)" on the one-line forms; with several processes (m->multi)
 * "all processes" and "(all processes)". */
int view_chart_cpu_scoped(struct grid *g, int x, int y, int w, int h, const struct metrics *m,
			  bool utf8, bool process_wide);
int view_chart_mem_scoped(struct grid *g, int x, int y, int w, int h, const struct metrics *m,
			  bool utf8, bool process_wide);
/* One full-width line in GRID_C_ALERT with view_chart_alerts_text: 1 if
 * drawn, 0 when no alert holds (nothing drawn). */
int view_alerts_render(struct grid *g, int y, const struct metrics *m);
/* One row of w cells, newest point on the right, each cell the maximum of
 * its group of points when there are more points than cells; max <= 0:
 * the series' own maximum. */
void view_sparkline(struct grid *g, int x, int y, int w, const struct series *s, double max,
		    bool utf8);

/* ---- the words (the TUI and batch output both use these) ---- */

/* "CPU now 187%  peak 240%  base 120%  floor 95%" (base only when set);
 * when the floor (p10 of the window) reads above now: "floor 40% (p10 of
 * 60s)". process_wide: "CPU (process) now ...". */
void view_chart_cpu_text(const struct metrics *m, bool process_wide, char *buf, size_t size);
/* "MEM 812 MiB RSS (anon 790 MiB, file 22 MiB)  +96 MiB/h, no drops in
 * 14m: STAIRS, leak suspected"; before 10 s of data "collecting (5s of
 * memory data, a verdict after 10s)". With several processes, the one
 * behind most of a rise is named after the rate: "+40 MiB/min (worker
 * 4502)". */
/* A runtime's heap beside its RSS (metrics.rt_heap, from runtime/hsperf
 * or runtime/goheap; metrics.rt_name, "Java" when NULL):
 * "Java heap 20 MiB of 32 MiB, RSS 68 MiB: 36 MiB outside the heap"; ""
 * when the target is no runtime whose heap is read. */
void view_chart_heap_text(const struct metrics *m, char *buf, size_t size);
void view_chart_mem_text(const struct metrics *m, bool process_wide, char *buf, size_t size);
/* The same in width columns (0: any): the "(anon …, file …)" breakdown
 * only when it fits whole. */
void view_chart_mem_fit(const struct metrics *m, bool process_wide, int width, char *buf,
			size_t size);
/* "limit 2.0 GiB (cgroup) reached in ~3h10m at this slope; anonymous
 * memory grows", "limit 2.0 GiB (cgroup)" when not rising, "" without a
 * limit (unless some kind of memory grows). */
void view_chart_mem_limit_text(const struct metrics *m, char *buf, size_t size);
/* The alerts line: every alert that holds, most urgent first, each with
 * "! " in front; "" if none (or m NULL). */
void view_chart_alerts_text(const struct metrics *m, char *buf, size_t size);
/* The same in width columns (0: any): each part of the MEM alert ("limit
 * in ~3h", "held by F", "(anonymous)") whole or left out, a later alert
 * that does not fit whole counted in a trailing "+N more". */
void view_chart_alerts_fit(const struct metrics *m, int width, char *buf, size_t size);
/* "+1.6 MiB/min", "-26 MiB/min", "+600 MiB/min": a memory slope in bytes
 * per second, per minute (the unit of every screen's memory rates). */
void view_chart_rate_text(double bytes_per_s, char *buf, size_t size);
/* "45s", "14m", "3h10m", "2d03h": a human span for verdicts. */
void view_chart_span_text(double s, char *buf, size_t size);

#endif
