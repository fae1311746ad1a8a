/*
 * stats — Welch's t-test, the two-proportion z-test and Holm's correction
 * (see stats.h for what each is for and its caveats).
 *
 * The incomplete beta function is evaluated by its continued fraction
 * (modified Lentz), using the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) where
 * the fraction converges slowly (x > (a+1)/(a+b+2)). Accuracy is about
 * 1e-12 relative, far beyond what deciding a star needs; the unit tests
 * check it against values from R (pt, pbeta) and scipy.
 */
#include "stacktop/lib/stats.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>

#define CF_MAX_ITER 300
#define CF_EPS 1e-15
#define CF_TINY 1e-300

/* The continued fraction of I_x(a, b) without its prefactor. */
static double betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < CF_TINY)
		d = CF_TINY;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= CF_MAX_ITER; m++) {
		int m2 = 2 * m;
		double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		d = fabs(d) < CF_TINY ? CF_TINY : d;
		c = 1 + aa / c;
		c = fabs(c) < CF_TINY ? CF_TINY : c;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		d = fabs(d) < CF_TINY ? CF_TINY : d;
		c = 1 + aa / c;
		c = fabs(c) < CF_TINY ? CF_TINY : c;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < CF_EPS)
			break;
	}
	return h;
}

double stats_betainc(double a, double b, double x)
{
	if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
		return NAN;
	if (x == 0 || x == 1)
		return x;
	/* log of x^a (1-x)^b / (a B(a, b)) without overflow. */
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

double stats_t_p2(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return 1;
	if (isinf(t))
		return 0;
	double p = stats_betainc(df / 2, 0.5, df / (df + t * t));
	return isnan(p) ? 1 : p > 1 ? 1 : p;
}

double stats_norm_p2(double z)
{
	if (isnan(z))
		return 1;
	return erfc(fabs(z) / sqrt(2));
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
	double m = 0, s = 0;

	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	*mean = m;
	*var = s / (double)(n - 1);
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_result *out)
{
	double ma, va, mb, vb;

	if (na < 2 || nb < 2 || !a || !b)
		return -EINVAL;
	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
	return stats_welch_moments(ma, va, na, mb, vb, nb, out);
}

int stats_welch_moments(double ma, double va, size_t na, double mb, double vb, size_t nb,
			struct stats_result *out)
{
	double sa, sb, se2;

	if (na < 2 || nb < 2)
		return -EINVAL;
	sa = va / (double)na;
	sb = vb / (double)nb;
	se2 = sa + sb;
	if (isnan(se2)) {
		*out = (struct stats_result){.stat = NAN, .df = 0, .p = 1};
		return 0;
	}
	if (se2 <= 1e-24 * (ma * ma + mb * mb)) {
		/* Constant on both sides (up to rounding): any difference is exact. */
		bool same = fabs(ma - mb) <= 1e-12 * (fabs(ma) + fabs(mb) + 1e-300);
		*out = (struct stats_result){.stat = same ? 0 : (mb > ma ? INFINITY : -INFINITY),
					     .df = (double)(na + nb - 2),
					     .p = same ? 1 : 0};
		return 0;
	}
	out->se = sqrt(se2);
	out->stat = (mb - ma) / out->se;
	/* Welch–Satterthwaite. */
	out->df = se2 * se2 / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
	out->p = stats_t_p2(out->stat, out->df);
	return 0;
}

int stats_two_prop(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2, struct stats_result *out)
{
	double p1, p2, pp, se;

	if (!n1 || !n2 || x1 > n1 || x2 > n2)
		return -EINVAL;
	p1 = (double)x1 / (double)n1;
	p2 = (double)x2 / (double)n2;
	pp = (double)(x1 + x2) / (double)(n1 + n2);
	se = sqrt(pp * (1 - pp) * (1 / (double)n1 + 1 / (double)n2));
	if (!(se > 0)) {
		*out = (struct stats_result){.stat = 0, .df = 0, .p = 1};
		return 0;
	}
	out->stat = (p2 - p1) / se;
	out->df = 0;
	/* unpooled, for a margin other than 0 */
	out->se = sqrt(p1 * (1 - p1) / (double)n1 + p2 * (1 - p2) / (double)n2);
	out->p = stats_norm_p2(out->stat);
	return 0;
}

double stats_p_above(const struct stats_result *r, double diff, double margin)
{
	if (!(r->se > 0))
		return diff > margin && r->p == 0 ? 0 : 1;
	double t = (diff - margin) / r->se;
	double p2 = r->df > 0 ? stats_t_p2(t, r->df) : stats_norm_p2(t);
	return t > 0 ? p2 / 2 : 1 - p2 / 2;
}

void stats_holm(const double *p, double *adj, size_t *idx, size_t n)
{
	double run = 0;

	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* Insertion sort by p: n is the number of rows of one diff. */
	for (size_t i = 1; i < n; i++) {
		size_t k = idx[i], j = i;
		double pk = isnan(p[k]) ? 1 : p[k];
		while (j > 0 && (isnan(p[idx[j - 1]]) ? 1 : p[idx[j - 1]]) > pk) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = k;
	}
	/* adj may be p: each slot is read, then written, once, in order. */
	for (size_t r = 0; r < n; r++) {
		double v = (isnan(p[idx[r]]) ? 1 : p[idx[r]]) * (double)(n - r);
		if (v > 1)
			v = 1;
		if (v > run)
			run = v;
		adj[idx[r]] = run;
	}
}
