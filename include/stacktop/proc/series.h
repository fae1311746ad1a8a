/*
 * series — time series and the maths that reads them: floor, baseline,
 * peak, trend (stairs vs rollercoaster vs flat), time to a limit, and the
 * spike alert.
 *
 * struct series is a fixed-capacity ring of (time, value) points, pushed
 * once per tick; the oldest point falls out when it is full, so memory is
 * bounded by the window. The maths functions are pure and work on plain
 * arrays so they can be tested on synthetic data.
 *
 * Trend, in words a user acts on:
 *  - stairs: the value keeps rising (robust Theil-Sen slope > 0, several
 *    separate rises) and never really drops: a leak suspect;
 *  - rollercoaster: it rises and falls back repeatedly (at least two real
 *    drops): healthy churn;
 *  - flat: neither (a single jump, e.g. one big allocation, is flat with a
 *    step, not a leak).
 * A "real" drop is a fall from the running peak by more than a quarter of
 * the series' range and more than the noise floor given by the caller.
 */
#ifndef STACKTOP_SERIES_H
#define STACKTOP_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct series {
	double *v;
	double *t;	       /* seconds, any origin */
	size_t cap, len, head; /* head: index of the oldest point */
};

int series_init(struct series *s, size_t cap);
void series_free(struct series *s);
void series_clear(struct series *s);
void series_push(struct series *s, double t, double v);
/* Copy up to max points, oldest first, into t and v (either may be NULL).
 * Returns the number copied. */
size_t series_get(const struct series *s, double *t, double *v, size_t max);
/* The newest value, or 0 when empty. */
double series_last(const struct series *s);
/* Points with t >= since, oldest first. */
size_t series_since(const struct series *s, double since, double *t, double *v, size_t max);

/* p in [0, 1], linear interpolation between order statistics; 0 when n 0. */
double series_percentile(const double *v, size_t n, double p);
/* The same of v already sorted (series_sort, ascending): several
 * percentiles of one array for one sort, and no allocation. */
double series_percentile_sorted(const double *v, size_t n, double p);
void series_sort(double *v, size_t n);
double series_median(const double *v, size_t n);
double series_max(const double *v, size_t n);
double series_min(const double *v, size_t n);
/* Theil-Sen slope (median of pairwise slopes), in value units per t unit.
 * Large inputs are thinned to at most 256 evenly spaced points first. */
double series_theil_sen(const double *t, const double *v, size_t n);

enum series_kind {
	SERIES_FLAT = 0,
	SERIES_STAIRS,
	SERIES_ROLLERCOASTER,
};

struct series_trend {
	enum series_kind kind;
	double slope;		 /* value units per second (Theil-Sen) */
	unsigned drops;		 /* real drops */
	unsigned rises;		 /* separate rises (runs of increase above the noise) */
	double since_drop_s;	 /* seconds since the last real drop (or the whole span) */
	double drop_every_s;	 /* mean interval between drops (rollercoaster) */
	double peak_lo, peak_hi; /* lowest and highest peak before a drop */
	double lo, hi;		 /* range of the series */
	double span_s;
};

/* noise: changes smaller than this never count (e.g. 1 MiB for memory). */
int series_trend(const double *t, const double *v, size_t n, double noise,
		 struct series_trend *out);

/* Seconds until value reaches limit at slope; -1 when never (slope <= 0,
 * limit unknown or already passed). */
double series_time_to(double value, double slope, double limit);

/* CPU above factor x baseline for at least for_s seconds. Feed every tick;
 * returns true while the alert holds. */
struct series_spike {
	double above_since; /* t when the run above started, or < 0 */
};
void series_spike_init(struct series_spike *sp);
bool series_spike_update(struct series_spike *sp, double t, double v, double baseline,
			 double factor, double for_s, double *held_s);

/*
 * Bursts and pauses (the busy floor): a floor is what stays busy in the
 * pauses between bursts. A steady worker has no pauses (high CPU is not a
 * floor), and a worker starved by other load is still runnable, never idle:
 * so pauses are read from the threads, not from dips of the process CPU.
 *
 * Each thread's steps are classified by the caller: IDLE (asleep the whole
 * step: under SERIES_IDLE_PCT of a core and not running at its end), BUSY
 * (at least SERIES_BUSY_PCT), SOME (between), NONE (not measured). A thread
 * bursts when at least SERIES_PAUSE_MIN_STEPS of its steps are busy and
 * at least that many and a quarter of its measured ones idle. A pause is a
 * step at which every bursting thread measured there is idle (and one is).
 */
#define SERIES_IDLE_PCT 2.0
#define SERIES_BUSY_PCT 5.0
#define SERIES_PAUSE_MIN_STEPS 3

enum series_step {
	SERIES_STEP_NONE = 0,
	SERIES_STEP_IDLE,
	SERIES_STEP_BUSY,
	SERIES_STEP_SOME,
};

/* The class of a step of cpu_pct % of a core, running (state R) at its
 * end or not. */
enum series_step series_step_of(double cpu_pct, bool running);
/* st: nthreads rows of n steps (thread j's step i is st[j * n + i]).
 * Marks pause[0..n) and returns how many steps are pauses: 0 when no
 * thread bursts. */
size_t series_pauses(const unsigned char *st, size_t nthreads, size_t n, bool *pause);
/* The median of v over the steps marked in pause (and, when st is not
 * NULL, measured: st[i] != SERIES_STEP_NONE); -1 when there is none. */
double series_median_at(const double *v, const unsigned char *st, const bool *pause, size_t n);

#endif
