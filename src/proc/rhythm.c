/*
 * rhythm — spikes on a cadence in a per-second series; the rules and the
 * test statistic are in rhythm.h.
 */
#include <math.h>
#include <string.h>

#include "stacktop/proc/rhythm.h"
#include "stacktop/proc/series.h"

/* The chance that m intervals from random (Poisson) onsets all fall within
 * s of their fitted median P. */
static double chance_regular(double period, double spread, size_t m)
{
	double w = spread / period;
	double q = w >= 1 ? 1 : exp(-(1 - w)) - exp(-(1 + w));

	return m > 1 ? pow(q, (double)(m - 1)) : 1;
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

/* Level, calm and duration of the k spikes; work: room for k doubles. */
static void spike_shape(const double *v, size_t n, double thr, const double *from, const double *to,
			size_t k, double *work, struct rhythm *out)
{
	size_t ncalm = 0;

	for (size_t s = 0; s < k; s++)
		work[s] = series_max(v + (size_t)from[s], (size_t)(to[s] - from[s]));
	out->level = series_median(work, k);
	/* The calm level: the median of the seconds not in a spike (as
	 * below the threshold; work has room for n). */
	for (size_t i = 0; i < n; i++)
		if (v[i] <= thr)
			work[ncalm++] = v[i];
	out->calm = series_median(work, ncalm);
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

bool rhythm_find(const double *t, const double *v, size_t n, double *scratch, struct rhythm *out)
{
	double *from = scratch, *to = scratch + n, *work = scratch + 2 * n;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (n < 2 * RHYTHM_MIN_SPIKES)
		return false;
	double base = series_percentile(v, n, RHYTHM_BASE_P);
	double thr = fmax(2 * base, base + RHYTHM_MARGIN);
	size_t k = spike_runs(v, n, thr, from, to);

	out->spikes = (unsigned)k;
	if (k < RHYTHM_MIN_SPIKES)
		return false;
	spike_shape(v, n, thr, from, to, k, work, out);

	/* The intervals between onsets, and their median and spread. */
	for (size_t s = 0; s + 1 < k; s++)
		work[s] = t[(size_t)from[s + 1]] - t[(size_t)from[s]];
	size_t m = k - 1;
	double period = series_median(work, m), spread = 0;
	for (size_t s = 0; s < m; s++)
		spread = fmax(spread, fabs(work[s] - period));
	out->period_s = period;
	out->spread_s = spread;
	if (period <= 0)
		return false;
	out->p = chance_regular(period, fmax(spread, RHYTHM_RES_S), m);

	double last = t[(size_t)from[k - 1]];
	return out->p < RHYTHM_P_MAX && spread <= period / 4 &&
	       t[n - 1] - last <= 2 * period + out->duration_s;
}
