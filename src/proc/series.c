/*
 * series — bounded time series and their statistics (see series.h).
 *
 * Everything here is O(n log n) or better on at most a window of points,
 * except Theil-Sen, which is O(n^2) and therefore thins its input to 256
 * points (32k pairs): plenty for a slope over a minute-to-hours window.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/proc/series.h"

int series_init(struct series *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	if (!cap)
		return -EINVAL;
	s->v = calloc(cap, sizeof(double));
	s->t = calloc(cap, sizeof(double));
	if (!s->v || !s->t) {
		series_free(s);
		return -ENOMEM;
	}
	s->cap = cap;
	return 0;
}

void series_free(struct series *s)
{
	free(s->v);
	free(s->t);
	memset(s, 0, sizeof(*s));
}

void series_clear(struct series *s)
{
	s->len = 0;
	s->head = 0;
}

void series_push(struct series *s, double t, double v)
{
	if (!s->cap)
		return;
	size_t at = (s->head + s->len) % s->cap;
	s->t[at] = t;
	s->v[at] = v;
	if (s->len < s->cap)
		s->len++;
	else
		s->head = (s->head + 1) % s->cap;
}

size_t series_get(const struct series *s, double *t, double *v, size_t max)
{
	size_t n = s->len < max ? s->len : max;
	size_t skip = s->len - n; /* keep the newest when max is short */
	for (size_t i = 0; i < n; i++) {
		size_t at = (s->head + skip + i) % s->cap;
		if (t)
			t[i] = s->t[at];
		if (v)
			v[i] = s->v[at];
	}
	return n;
}

double series_last(const struct series *s)
{
	if (!s->len)
		return 0;
	return s->v[(s->head + s->len - 1) % s->cap];
}

size_t series_since(const struct series *s, double since, double *t, double *v, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < s->len && n < max; i++) {
		size_t at = (s->head + i) % s->cap;
		if (s->t[at] < since)
			continue;
		if (t)
			t[n] = s->t[at];
		if (v)
			v[n] = s->v[at];
		n++;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void series_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_double);
}

double series_percentile_sorted(const double *v, size_t n, double p)
{
	if (!n)
		return 0;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	double pos = p * (double)(n - 1);
	size_t i = (size_t)pos;
	double frac = pos - (double)i;
	return i + 1 < n ? v[i] + frac * (v[i + 1] - v[i]) : v[i];
}

double series_percentile(const double *v, size_t n, double p)
{
	if (!n)
		return 0;
	double *tmp = malloc(n * sizeof(double));
	if (!tmp)
		return 0;
	memcpy(tmp, v, n * sizeof(double));
	series_sort(tmp, n);
	double r = series_percentile_sorted(tmp, n, p);
	free(tmp);
	return r;
}

double series_median(const double *v, size_t n)
{
	return series_percentile(v, n, 0.5);
}

double series_max(const double *v, size_t n)
{
	double m = n ? v[0] : 0;
	for (size_t i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

double series_min(const double *v, size_t n)
{
	double m = n ? v[0] : 0;
	for (size_t i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* Rearrange a so that a[k] is its k-th smallest, those before it no
 * larger and those after no smaller (Hoare's selection, median-of-three
 * pivot): O(n) on average where a sort is O(n log n). */
static void select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		double x = a[lo], y = a[mid], z = a[hi];
		double pivot =
		    x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		size_t i = lo, j = hi;

		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double tmp = a[i];
				a[i] = a[j];
				a[j] = tmp;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return; /* between j and i: equal to the pivot */
	}
}

/* series_median of a (n > 0), reordering it: the same value without a
 * sort. Theil-Sen's median of 32k slopes took 3 ms sorted. */
static double median_in_place(double *a, size_t n)
{
	if (!n)
		return 0;
	double pos = 0.5 * (double)(n - 1);
	size_t i = (size_t)pos;
	double frac = pos - (double)i;

	select_kth(a, n, i);
	if (i + 1 >= n || frac == 0)
		return a[i];
	/* The next order statistic: the smallest of those after a[i]. */
	double next = series_min(a + i + 1, n - i - 1);
	return a[i] + frac * (next - a[i]);
}

double series_theil_sen(const double *t, const double *v, size_t n)
{
	enum { MAXPTS = 256 };
	double tt[MAXPTS], vv[MAXPTS];
	if (n < 2)
		return 0;
	size_t m = n < MAXPTS ? n : MAXPTS;
	for (size_t i = 0; i < m; i++) {
		size_t k = m == n ? i : (size_t)((double)i * (double)(n - 1) / (double)(m - 1));
		tt[i] = t[k];
		vv[i] = v[k];
	}
	double *slopes = malloc(m * (m - 1) / 2 * sizeof(double));
	if (!slopes)
		return 0;
	size_t ns = 0;
	for (size_t i = 0; i < m; i++)
		for (size_t j = i + 1; j < m; j++)
			if (tt[j] != tt[i])
				slopes[ns++] = (vv[j] - vv[i]) / (tt[j] - tt[i]);
	double r = median_in_place(slopes, ns);
	free(slopes);
	return r;
}

/* Zigzag over the series with threshold th: count the falls from a peak
 * by more than th (drops) and remember their peaks and times. */
static void series_zigzag(const double *t, const double *v, size_t n, double th,
			  struct series_trend *out)
{
	bool up = true;
	double peak = v[0], trough = v[0], last_drop_t = t[0];
	bool any_peak = false;
	for (size_t i = 1; i < n; i++) {
		if (up) {
			if (v[i] > peak)
				peak = v[i];
			if (peak - v[i] > th) {
				out->drops++;
				if (!any_peak || peak < out->peak_lo)
					out->peak_lo = peak;
				if (!any_peak || peak > out->peak_hi)
					out->peak_hi = peak;
				any_peak = true;
				last_drop_t = t[i];
				up = false;
				trough = v[i];
			}
		} else {
			if (v[i] < trough)
				trough = v[i];
			if (v[i] - trough > th) {
				out->rises++;
				up = true;
				peak = v[i];
			}
		}
	}
	out->since_drop_s = t[n - 1] - last_drop_t;
}

int series_trend(const double *t, const double *v, size_t n, double noise, struct series_trend *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	out->lo = series_min(v, n);
	out->hi = series_max(v, n);
	out->span_s = t[n - 1] - t[0];
	out->since_drop_s = out->span_s;
	if (n < 5)
		return 0;
	out->slope = series_theil_sen(t, v, n);
	double range = out->hi - out->lo;
	if (range <= noise)
		return 0; /* flat */
	double th = fmax(noise, 0.25 * range);
	series_zigzag(t, v, n, th, out);
	if (out->drops)
		out->drop_every_s = out->span_s / out->drops;
	if (out->drops >= 2) {
		out->kind = SERIES_ROLLERCOASTER;
		return 0;
	}
	/* Rising without a real drop: a leak suspect, unless all of the rise
	 * is one jump (one big allocation, then flat). */
	double biggest_step = 0;
	for (size_t i = 1; i < n; i++)
		biggest_step = fmax(biggest_step, v[i] - v[i - 1]);
	double rise = out->slope * out->span_s;
	if (out->drops == 0 && out->slope > 0 && rise > fmax(3 * noise, 0.5 * range) &&
	    biggest_step < 0.6 * range)
		out->kind = SERIES_STAIRS;
	return 0;
}

double series_time_to(double value, double slope, double limit)
{
	if (slope <= 0 || limit <= 0 || value >= limit)
		return -1;
	return (limit - value) / slope;
}

void series_spike_init(struct series_spike *sp)
{
	sp->above_since = -1;
}

bool series_spike_update(struct series_spike *sp, double t, double v, double baseline,
			 double factor, double for_s, double *held_s)
{
	if (baseline <= 0 || v <= factor * baseline) {
		sp->above_since = -1;
		if (held_s)
			*held_s = 0;
		return false;
	}
	if (sp->above_since < 0)
		sp->above_since = t;
	double held = t - sp->above_since;
	if (held_s)
		*held_s = held;
	return held >= for_s;
}

enum series_step series_step_of(double cpu_pct, bool running)
{
	if (cpu_pct < SERIES_IDLE_PCT && !running)
		return SERIES_STEP_IDLE;
	return cpu_pct >= SERIES_BUSY_PCT ? SERIES_STEP_BUSY : SERIES_STEP_SOME;
}

/* Thread row r bursts: busy steps and idle ones, a quarter of what was
 * measured at least (a poller that misses one wake-up is not bursty). */
static bool row_bursts(const unsigned char *r, size_t n)
{
	size_t idle = 0, busy = 0, seen = 0;

	for (size_t i = 0; i < n; i++) {
		seen += r[i] != SERIES_STEP_NONE;
		idle += r[i] == SERIES_STEP_IDLE;
		busy += r[i] == SERIES_STEP_BUSY;
	}
	return busy >= SERIES_PAUSE_MIN_STEPS && idle >= SERIES_PAUSE_MIN_STEPS && 4 * idle >= seen;
}

size_t series_pauses(const unsigned char *st, size_t nthreads, size_t n, bool *pause)
{
	size_t np = 0;
	bool any = false;

	for (size_t i = 0; i < n; i++)
		pause[i] = true;
	/* A step is a pause while no bursting thread says otherwise; one that
	 * no bursting thread was measured at is not. */
	bool *seen = calloc(n ? n : 1, sizeof(bool));
	if (!seen) {
		memset(pause, 0, n * sizeof(bool));
		return 0;
	}
	for (size_t j = 0; j < nthreads; j++) {
		const unsigned char *r = st + j * n;
		if (!row_bursts(r, n))
			continue;
		any = true;
		for (size_t i = 0; i < n; i++) {
			if (r[i] == SERIES_STEP_NONE)
				continue;
			seen[i] = true;
			if (r[i] != SERIES_STEP_IDLE)
				pause[i] = false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		pause[i] = any && pause[i] && seen[i];
		np += pause[i];
	}
	free(seen);
	return np;
}

double series_median_at(const double *v, const unsigned char *st, const bool *pause, size_t n)
{
	double *tmp = malloc((n ? n : 1) * sizeof(double));
	size_t k = 0;

	if (!tmp)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (pause[i] && (!st || st[i] != SERIES_STEP_NONE))
			tmp[k++] = v[i];
	double r = k ? series_median(tmp, k) : -1;
	free(tmp);
	return r;
}
