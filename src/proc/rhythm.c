/*
 * rhythm — spikes on a cadence in a per-second series; the rules and the
 * test statistic are in rhythm.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/proc/rhythm.h"
#include "stacktop/proc/series.h"

/* The chance that a Poisson interval (mean P) falls within w P of k P. */
static double near_multiple(double w, int k)
{
	return w >= k ? 1 - exp(-(k + w)) : exp(-(k - w)) - exp(-(k + w));
}

/* The chance that m intervals from random (Poisson) onsets fall within s
 * of their fitted median P, j of them within s of 2 P or 3 P instead (a
 * spike missed, or too small under load to cross the threshold): one
 * interval is spent fitting P, and the j can be any j of the m. */
static double chance_regular(double period, double spread, size_t m, size_t j)
{
	double w = spread / period;
	double q1 = near_multiple(w, 1), qm = near_multiple(w, 2) + near_multiple(w, 3);
	double ways = 1;

	if (w >= 1 || m < 2)
		return 1;
	for (size_t i = 0; i < j; i++)
		ways = ways * (double)(m - i) / (double)(i + 1);
	return fmin(1, ways * pow(q1, (double)(m - 1 - j)) * pow(qm, (double)j));
}

/* The runs above thr, a run at the first point left out: their first
 * index into from[], one past their last into to[]. Returns how many. */
static size_t spike_runs(const double *v, size_t n, double thr, double *from, double *to)
{
	size_t k = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && v[j] > thr)
			j++;
		if (j > i && i > 0) {
			from[k] = (double)i;
			to[k] = (double)j;
			k++;
		}
		i = j > i ? j : i + 1;
	}
	return k;
}

/* Whether second i is right before or right after one of the k spikes. */
static bool at_spike_edge(size_t i, const double *from, const double *to, size_t k)
{
	for (size_t s = 0; s < k; s++)
		if (i + 1 == (size_t)from[s] || i == (size_t)to[s])
			return true;
	return false;
}

/* Level, calm and duration of the k spikes; work: room for k doubles. */
static void spike_shape(const double *v, size_t n, double thr, const double *from, const double *to,
			size_t k, double *work, struct rhythm *out)
{
	size_t ncalm = 0;

	for (size_t s = 0; s < k; s++)
		work[s] = series_max(v + (size_t)from[s], (size_t)(to[s] - from[s]));
	out->level = series_median(work, k);
	/* The calm level: the median of the seconds not in a spike (as
	 * below the threshold; work has room for n), nor at its edges: a
	 * spike squeezed by other load spreads into the seconds around it,
	 * and those shoulders read as a noisy floor. */
	for (size_t i = 0; i < n; i++)
		if (v[i] <= thr && !at_spike_edge(i, from, to, k))
			work[ncalm++] = v[i];
	out->calm = series_median(work, ncalm);
	out->calm_p90 = series_percentile(work, ncalm, 0.9);
	/* A spike's duration: its CPU above the calm level over its peak's,
	 * the length of a full-height spike that did the same work (one
	 * of 1.5 s spreads over three one-second points). */
	for (size_t s = 0; s < k; s++) {
		double above = 0, top = 0;
		for (size_t i = (size_t)from[s]; i < (size_t)to[s]; i++) {
			above += v[i] - out->calm;
			top = fmax(top, v[i] - out->calm);
		}
		work[s] = top > 0 ? above / top : 0;
	}
	out->duration_s = series_median(work, k);
}

/* The onsets' regularity in v (the runs above thr): the chance p of
 * intervals this regular from random onsets, 1 when there is no rhythm to
 * test (too few spikes, period under RHYTHM_MIN_PERIOD_S, spread over a
 * quarter of it); period and spread into *period, *spread. on, iv: room
 * for n doubles each. */
static double regularity(const double *t, const double *v, size_t n, double thr, bool lenient,
			 double *on, double *iv, double *period, double *spread)
{
	size_t k = spike_runs(v, n, thr, on, iv), m;

	*period = *spread = 0;
	if (k < RHYTHM_MIN_SPIKES)
		return 1;
	for (size_t s = 0; s + 1 < k; s++)
		iv[s] = t[(size_t)on[s + 1]] - t[(size_t)on[s]];
	m = k - 1;
	*period = series_median(iv, m);
	if (*period < RHYTHM_MIN_PERIOD_S)
		return 1;
	/* Lenient: an interval near 2 P or 3 P is a spike missed, one in
	 * four of them at most, each measured from its multiple. */
	size_t missed = 0;
	double most = lenient ? RHYTHM_MISSED_MAX + 1 : 1;
	for (size_t s = 0; s < m; s++) {
		double mult = fmax(1, fmin(most, floor(iv[s] / *period + 0.5)));
		missed += mult > 1;
		*spread = fmax(*spread, fabs(iv[s] - mult * *period));
	}
	if (*spread > *period / 4 || 4 * missed > m)
		return 1;
	return chance_regular(*period, *spread + RHYTHM_RES_S, m, missed);
}

/* How many of RHYTHM_SHUFFLES shufflings of the seconds are at least as
 * regular (p no higher) as the series: noise whose runs happen to look
 * regular is as regular shuffled. A fixed seed: the same series, the same
 * answer. */
static unsigned shuffled_as_regular(const double *t, const double *v, size_t n, double thr,
				    bool lenient, double p, double *copy, double *on, double *iv)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned hits = 0;
	double per, spr;

	memcpy(copy, v, n * sizeof(double));
	for (unsigned r = 0; r < RHYTHM_SHUFFLES; r++) {
		for (size_t i = n - 1; i > 0; i--) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t j = (size_t)(x % (i + 1));
			double tmp = copy[i];
			copy[i] = copy[j];
			copy[j] = tmp;
		}
		hits += regularity(t, copy, n, thr, lenient, on, iv, &per, &spr) <= p;
	}
	return hits;
}

bool rhythm_find(const double *t, const double *v, size_t n, double *scratch, struct rhythm *out)
{
	return rhythm_find_margin(t, v, n, RHYTHM_MARGIN, scratch, out);
}

bool rhythm_find_margin(const double *t, const double *v, size_t n, double margin, double *scratch,
			struct rhythm *out)
{
	double *from = scratch, *to = scratch + n, *work = scratch + 2 * n, *copy = scratch + 3 * n;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (n < 2 * RHYTHM_MIN_SPIKES)
		return false;
	double base = series_percentile(v, n, RHYTHM_BASE_P);
	double thr = fmax(2 * base, base + margin);
	size_t k = spike_runs(v, n, thr, from, to);

	out->thr = thr;
	out->spikes = (unsigned)k;
	if (k < RHYTHM_MIN_SPIKES)
		return false;
	spike_shape(v, n, thr, from, to, k, work, out);
	double last = t[(size_t)from[k - 1]];
	out->onset_t = last;
	/* Strict first; only a rhythm that is not one strictly is tested
	 * again with missed spikes allowed (its shuffles too). */
	bool lenient = false;
	out->p = regularity(t, v, n, thr, false, from, work, &out->period_s, &out->spread_s);
	if (out->p >= RHYTHM_P_MAX) {
		lenient = true;
		out->p = regularity(t, v, n, thr, true, from, work, &out->period_s, &out->spread_s);
	}
	if (out->p >= RHYTHM_P_MAX || t[n - 1] - last > 2 * out->period_s + out->duration_s)
		return false;
	/* Spikes over a quiet floor: noise's calm seconds spread up to the
	 * threshold, a rhythm's cluster at its calm level. */
	if (out->calm_p90 - out->calm > (out->level - out->calm) / RHYTHM_QUIET)
		return false;
	return shuffled_as_regular(t, v, n, thr, lenient, out->p, copy, from, work) == 0;
}

/* The points of s into a buffer of 6 n doubles: t, v, then 4 n of
 * scratch. NULL when empty or out of memory (caller frees). */
static double *series_copy(const struct series *s, size_t *n)
{
	size_t cap = s->len;
	double *tv = cap ? malloc(cap * sizeof(double) * 6) : NULL;

	*n = tv ? series_get(s, tv, tv + cap, cap) : 0;
	return tv;
}

/* Nothing found (no points, or out of memory). */
static bool none(struct rhythm *out)
{
	memset(out, 0, sizeof(*out));
	out->p = 1;
	return false;
}

bool rhythm_series(const struct series *s, double margin, struct rhythm *out)
{
	size_t n;
	double *tv = series_copy(s, &n);

	if (!tv)
		return none(out);
	bool found = rhythm_find_margin(tv, tv + n, n, margin, tv + 2 * n, out);
	free(tv);
	return found;
}

bool rhythm_series_falls(const struct series *s, double min_margin, double frac, struct rhythm *out)
{
	size_t n;
	double *tv = series_copy(s, &n);

	if (!tv)
		return none(out);
	double *v = tv + n;
	/* the margin from the level, before the values become falls */
	double margin = fmax(min_margin, frac * series_median(v, n));
	for (size_t i = n; i-- > 1;)
		v[i] = fmax(0, v[i - 1] - v[i]);
	bool found = rhythm_find_margin(tv + 1, v + 1, n - 1, margin, tv + 2 * n, out);
	free(tv);
	return found;
}
