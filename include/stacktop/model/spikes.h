/*
 * spikes — what rises in the spikes (issue 27): the stacks of the seconds
 * that matter, kept beside the window for longer than it, and the spike
 * seconds compared with calm ones by model/diff.
 *
 * Once a second, after the metrics tick (spikes_tick at now): the window's
 * one-second bucket b = floor(now) - 2 (complete: samples reach the window
 * within a tick) is kept as a diff snapshot of its own (its stacks, with
 * copies of their names), with the process CPU of the metrics point that
 * covers most of it (the point at t covers (t - 1, t]: the one with t in
 * [b + 0.5, b + 1.5)). A second without samples or without its point is not
 * kept. While the metrics have a rhythm every second is kept; without one
 * only a second above the spike threshold (rhythm.thr), the newest
 * SPIKES_CANDIDATES of them (so a steady target, or one whose stacks are
 * all new, keeps nothing: memory follows the rhythm). When a rhythm is
 * found, the window's last SPIKES_BACKFILL_S seconds (fewer in a shorter
 * window) are kept at once from it, the calm ones it still holds with the
 * candidates among them, so the riser is named on the tick the rhythm is
 * (nothing was copied to wait for it). The budget decides which go:
 *
 *   at most SPIKES_MAX_SECONDS seconds and SPIKES_BUDGET bytes (the sum of
 *   each snapshot's diff_snap_bytes: names, nodes, cells, indexes). Past
 *   either, the oldest calm second goes while calm seconds outnumber spike
 *   seconds SPIKES_CALM_RATIO to 1 (so spikes are kept over a sample of
 *   calm seconds), else the oldest second. A second is a spike second when
 *   its CPU is above the rhythm threshold (metrics' rhythm.thr) when the
 *   budget is applied.
 *
 * While the metrics have a rhythm (alert_rhythm), at once, then each tick
 * until a riser is found (SPIKES_QUICK ticks at most: diff may want a few
 * more seconds a side), then at most every SPIKES_EVERY_S seconds
 * when a spike second was kept since (the
 * comparison reads every kept second: ~600 small tries), the kept seconds are split by the rhythm's
 * threshold now: spike seconds (CPU above it) and calm ones (the others);
 * each side becomes one snapshot with one second per kept second
 * (diff_snap_merge) and diff_compare tests each function's own and total
 * share per second (Welch, Holm; kernel frames folded into their user
 * caller). The risers are the rows whose own or total share is
 * significantly higher in spike seconds (diff_row_change), by at least
 * SPIKES_MIN_PTS points, the larger rise first (at equal rises, the larger
 * own rise: the leaf before its callers), at most RHYTHM_RISERS; each is
 * flagged gc when funckind calls it GC. They are written into the metrics
 * (m->risers, m->nrisers) on every tick: none without a rhythm.
 *
 * The caller owns sp (spikes_new, spikes_free); the window and metrics are
 * borrowed for the call.
 */
#ifndef STACKTOP_SPIKES_H
#define STACKTOP_SPIKES_H

#include <stddef.h>
#include <stdint.h>

#define SPIKES_MAX_SECONDS 600
#define SPIKES_CANDIDATES 32
#define SPIKES_BUDGET (8u << 20)
#define SPIKES_CALM_RATIO 2
#define SPIKES_EVERY_S 5
#define SPIKES_QUICK 15
#define SPIKES_BACKFILL_S 60
#define SPIKES_MIN_PTS 5.0

struct spikes;
struct window;
struct metrics;

int spikes_new(struct spikes **out);
void spikes_free(struct spikes *sp);

/* The second that ended two seconds before now_s (seconds of
 * CLOCK_MONOTONIC, the samples' clock) kept, the budget applied, and the
 * risers updated into m. 0 or -ENOMEM (nothing kept; m's risers cleared). */
int spikes_tick(struct spikes *sp, struct window *w, struct metrics *m, double now_s);

/* Seconds kept and the bytes they hold (for tests and the memory bench). */
size_t spikes_kept(const struct spikes *sp, size_t *bytes);

/* One kept second added directly (tests): its snapshot (taken over) and
 * CPU. 0 or -ENOMEM (sn freed). */
struct diff_snap;
int spikes_keep(struct spikes *sp, struct diff_snap *sn, double t, double cpu,
		const struct metrics *m);
/* The risers from the kept seconds by m's rhythm now (the comparison
 * spikes_tick makes), into m. 0 or -ENOMEM. */
int spikes_compare(struct spikes *sp, struct metrics *m);

#endif
