/*
 * stats — the tests `stacktop diff` and the live diff use to tell a change
 * from noise. Pure numbers: no allocation, no I/O.
 *
 *  - stats_welch: Welch's unequal-variance t-test on two samples of
 *    observations (a function's share in each second, or in each repeated
 *    recording). The p-value comes from Student's t distribution through the
 *    regularized incomplete beta function (stats_betainc, a Lentz continued
 *    fraction as in Numerical Recipes §6.4).
 *  - stats_two_prop: the two-proportion z-test (pooled), for when all we
 *    have is one count per side. It treats every sample as independent,
 *    which samples of a running program are not: it overstates certainty.
 *  - stats_holm: Holm's step-down correction over the rows of a diff, so
 *    that testing a hundred functions does not star five by chance.
 *
 * All p-values are two-sided. NaN inputs give p = 1 (never significant).
 */
#ifndef STACKTOP_STATS_H
#define STACKTOP_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Observations a side needs before the per-unit test says anything. */
#define STATS_MIN_UNITS 3

struct stats_result {
	double stat; /* t or z */
	double df;   /* Welch's degrees of freedom (0 for z) */
	double p;    /* two-sided p-value, in [0, 1] */
	double se;   /* standard error of the difference (b - a), the inputs' units */
};

/* I_x(a, b), a, b > 0, x in [0, 1]; NaN outside. */
double stats_betainc(double a, double b, double x);
/* P(|T| >= |t|) for Student's t with df > 0 degrees of freedom. */
double stats_t_p2(double t, double df);
/* P(|Z| >= |z|) for the standard normal. */
double stats_norm_p2(double z);
/* Welch's test of mean(a) vs mean(b); na, nb >= 2, else -EINVAL. Two
 * samples without any variance: p = 1 when their means are equal, else 0. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, struct stats_result *out);
/* The same from each sample's mean, variance (n - 1 denominator) and size. */
int stats_welch_moments(double ma, double va, size_t na, double mb, double vb, size_t nb,
			struct stats_result *out);
/* x1 of n1 vs x2 of n2; n1, n2 > 0, x <= n, else -EINVAL. */
int stats_two_prop(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2, struct stats_result *out);
/* Holm-adjusted p-values of p[0..n) into adj (may be p itself); scratch
 * holds n indices. Reject at level alpha where adj < alpha. */
/* One-sided p-value that the true difference exceeds margin, given the
 * observed difference diff and r's standard error and degrees of freedom
 * (0: normal). 1 when r has no standard error. */
double stats_p_above(const struct stats_result *r, double diff, double margin);
void stats_holm(const double *p, double *adj, size_t *scratch, size_t n);

#endif
