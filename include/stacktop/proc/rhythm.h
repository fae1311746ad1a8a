/*
 * rhythm — spikes on a cadence in a per-second series (issue 27): "CPU
 * spikes every 15 s (±1 s), 3 s each, to 100% from 20%". Numbers only;
 * the words are the view's.
 *
 * On points one a second (t in seconds, oldest first):
 *  - base: the RHYTHM_BASE_P quantile of the series (the level between
 *    spikes, while spikes hold fewer than 3 seconds in 4);
 *  - a spike second: above max(2 x base, base + RHYTHM_MARGIN); a spike is
 *    a run of spike seconds; a run that starts at the first point is left
 *    out (its onset is unknown);
 *  - calm: the median of the other seconds; level: the median of the
 *    spikes' peaks; duration: the median of each spike's CPU above calm
 *    over its peak's (the length of a full-height spike doing that work:
 *    a 1.5 s spike spreads over three one-second points);
 *  - at least RHYTHM_MIN_SPIKES spikes; the period P is the median of the
 *    intervals between onsets; when the onsets fail the tests below, they
 *    are tested again (the shuffles too) with an interval near 2 P or 3 P
 *    taken for a spike missed (one too small under load to cross the
 *    threshold), for at most one interval in four; the spread s is the largest
 *    distance of an interval from P (a missed one's from its multiple);
 *  - the tests, two nulls: were the onsets random (a Poisson process,
 *    intervals exponential with mean P), an interval would fall within
 *    s + RHYTHM_RES_S of P (the points' grid blurs each interval by up to
 *    a second) with chance q = e^-(1 - w) - e^-(1 + w), w = (s + 1) / P,
 *    and within it of 2 P or 3 P with chance q' (the same sum at 2 and
 *    3); the m intervals (one spent fitting P), j of them missed ones,
 *    do so with chance p = C(m, j) q^(m - 1 - j) q'^j, which must be
 *    under RHYTHM_P_MAX; and were the seconds in
 *    random order (noise: its runs above the threshold are more regular
 *    than Poisson onsets), none of RHYTHM_SHUFFLES shufflings of them
 *    (fixed seed) may be as regular (p as low): a permutation test at
 *    1 %. Also spikes over a quiet floor: the calm seconds' 90th
 *    percentile within (level - calm) / RHYTHM_QUIET of calm (noise's
 *    calm seconds spread up to the threshold); P >= RHYTHM_MIN_PERIOD_S, s <= P / 4, and the last
 * onset at most 2 P + the spike's duration before the newest point (a rhythm that stopped is no
 * longer reported). A steady or slowly rising series has no spike seconds (nothing is twice its
 * median); noise and randomly timed bursts fail the test.
 */
#ifndef STACKTOP_RHYTHM_H
#define STACKTOP_RHYTHM_H

#include <stdbool.h>
#include <stddef.h>

#define RHYTHM_BASE_P 0.25
#define RHYTHM_MARGIN 10.0
#define RHYTHM_MIN_SPIKES 3
#define RHYTHM_RES_S 1.0
#define RHYTHM_MIN_PERIOD_S 3.0
#define RHYTHM_P_MAX 0.01
#define RHYTHM_SHUFFLES 99
#define RHYTHM_QUIET 8.0
/* Spikes in a row one missed interval may stand for (2 P, 3 P). */
#define RHYTHM_MISSED_MAX 2

struct rhythm {
	double period_s;   /* median interval between onsets */
	double spread_s;   /* largest distance of an interval from the period */
	double duration_s; /* median spike length (full-height equivalent) */
	double level;	   /* median of the spikes' peaks */
	double calm;	   /* median of the seconds outside spikes */
	double calm_p90;   /* their 90th percentile */
	double p;	   /* the chance of intervals this regular from random onsets */
	double thr;	   /* a spike second is above it (0 before 2 x RHYTHM_MIN_SPIKES points) */
	double onset_t;	   /* the newest spike's first point (its t) */
	unsigned spikes;
};

/* What rises in the spikes: the functions whose share of the samples is
 * higher in spike seconds than in calm ones (model/spikes fills these;
 * rhythm_find does not). Raw names from the target: sanitize to show. */
#define RHYTHM_RISERS 2
struct rhythm_riser {
	char func[128];
	double pts; /* the share's rise, in points */
	bool gc;    /* the runtime's collector (funckind GC) */
};

/* Look for a rhythm in the n points (t, v). True when one holds (out
 * filled); false otherwise (out->spikes and out->p still say what was
 * seen). scratch: room for 4 n doubles. */
bool rhythm_find(const double *t, const double *v, size_t n, double *scratch, struct rhythm *out);
/* The same for any series: a spike second is above max(2 x base, base +
 * margin) (rhythm_find's margin is RHYTHM_MARGIN, points of CPU). */
bool rhythm_find_margin(const double *t, const double *v, size_t n, double margin, double *scratch,
			struct rhythm *out);

/* A series' points (proc/series; its own scratch, freed): spikes on a
 * cadence with margin (a thread's CPU: RHYTHM_MARGIN). False too when out
 * of memory. */
struct series;
bool rhythm_series(const struct series *s, double margin, struct rhythm *out);
/* Falls on a cadence (a memory that rises and falls, a collector's
 * sawtooth): the rhythm of the falls, v[i-1] - v[i] where positive (0
 * where it rose) at t[i], a fall counting when it is over max(min_margin,
 * frac x the series' median) (noise frees a page now and then; a
 * sawtooth's falls are a part of the whole). level: the median fall, calm:
 * the median of the other seconds' (about 0). A steady or rising series
 * has no falls; random ones fail the tests as spikes do. */
bool rhythm_series_falls(const struct series *s, double min_margin, double frac,
			 struct rhythm *out);

#endif
