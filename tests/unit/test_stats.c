/* Unit tests for stats: the incomplete beta function and the t and normal
 * tails against values computed with mpmath (30 digits), Welch's test on a
 * published example, the two-proportion test, Holm's correction, and the
 * tests' behaviour on known distributions (false alarms at the nominal rate
 * under the null, power against a real shift). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/stats.h"

#define CLOSE(x, want, rel) assert_true(fabs((x) - (want)) <= (rel)*fabs(want) + 1e-300)

static void test_betainc(void **state)
{
	CLOSE(stats_betainc(2, 3, 0.4), 0.5248, 1e-12); /* a binomial tail, exact */
	CLOSE(stats_betainc(0.5, 0.5, 0.3), 0.369010119565545375, 1e-10);
	CLOSE(stats_betainc(50, 40, 0.55), 0.454795210863869406, 1e-9);
	assert_true(stats_betainc(2, 3, 0) == 0);
	assert_true(stats_betainc(2, 3, 1) == 1);
	assert_true(isnan(stats_betainc(-1, 3, 0.5)));
	assert_true(isnan(stats_betainc(1, 3, 1.5)));
}

static void test_t_tail(void **state)
{
	CLOSE(stats_t_p2(2, 10), 0.0733880347707403656, 1e-9);
	CLOSE(stats_t_p2(-3, 5), 0.0300992478974625738, 1e-9);
	CLOSE(stats_t_p2(1, 1), 0.5, 1e-12); /* Cauchy: P(|T| > 1) = 1/2 */
	CLOSE(stats_t_p2(0.5, 200), 0.617624752316460671, 1e-9);
	CLOSE(stats_t_p2(8, 3.5), 0.00227732644472047960, 1e-8);
	assert_true(stats_t_p2(0, 7) == 1);
	assert_true(stats_t_p2(INFINITY, 7) == 0);
	assert_true(stats_t_p2(NAN, 7) == 1);
	CLOSE(stats_norm_p2(1.959963984540054), 0.05, 1e-9);
}

/* Welch's t-test, example 1 of Wikipedia's article (t = 2.46, df = 25.0,
 * p = 0.021); the sign is new minus base. */
static void test_welch_known(void **state)
{
	static const double a[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
				   21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
	static const double b[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
				   24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
	struct stats_result r;

	assert_int_equal(stats_welch(a, 15, b, 15, &r), 0);
	CLOSE(r.stat, 2.455356398286006, 1e-9);
	CLOSE(r.df, 24.98852929023142, 1e-9);
	CLOSE(r.p, 0.0213780014628669841, 1e-8);
	assert_int_equal(stats_welch(b, 15, a, 15, &r), 0);
	CLOSE(r.stat, -2.455356398286006, 1e-9);
	assert_int_equal(stats_welch(a, 1, b, 15, &r), -22);
	/* the moments form gives the same (a: mean 20.82, sd^2 from the data) */
	struct stats_result m;
	double ma = 0, mb = 0, va = 0, vb = 0;
	for (int i = 0; i < 15; i++)
		ma += a[i] / 15, mb += b[i] / 15;
	for (int i = 0; i < 15; i++)
		va += (a[i] - ma) * (a[i] - ma) / 14, vb += (b[i] - mb) * (b[i] - mb) / 14;
	assert_int_equal(stats_welch_moments(ma, va, 15, mb, vb, 15, &m), 0);
	CLOSE(m.p, 0.0213780014628669841, 1e-8);
	assert_int_equal(stats_welch_moments(ma, va, 1, mb, vb, 15, &m), -22);
}

static void test_welch_constant(void **state)
{
	static const double z[] = {0.1, 0.1, 0.1}, o[] = {0.4, 0.4, 0.4};
	struct stats_result r;

	assert_int_equal(stats_welch(z, 3, z, 3, &r), 0);
	assert_true(r.p == 1);
	assert_int_equal(stats_welch(z, 3, o, 3, &r), 0);
	assert_true(r.p == 0 && r.stat > 0);
}

static void test_two_prop(void **state)
{
	struct stats_result r;

	assert_int_equal(stats_two_prop(60, 100, 30, 100, &r), 0);
	CLOSE(r.stat, -4.26401432711220835, 1e-9);
	CLOSE(r.p, 0.0000200786561242648763, 1e-7);
	assert_int_equal(stats_two_prop(5, 10, 5, 10, &r), 0);
	assert_true(r.p > 0.999);
	assert_int_equal(stats_two_prop(0, 10, 0, 10, &r), 0); /* no variance */
	assert_true(r.p == 1);
	assert_int_equal(stats_two_prop(11, 10, 0, 10, &r), -22);
	assert_int_equal(stats_two_prop(1, 0, 0, 10, &r), -22);
}

static void test_holm(void **state)
{
	double p[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
	size_t idx[4];

	stats_holm(p, adj, idx, 4);
	CLOSE(adj[0], 0.03, 1e-12);
	CLOSE(adj[1], 0.06, 1e-12);
	CLOSE(adj[2], 0.06, 1e-12);
	CLOSE(adj[3], 0.02, 1e-12);
	stats_holm(p, p, idx, 4); /* in place */
	CLOSE(p[1], 0.06, 1e-12);
	CLOSE(p[3], 0.02, 1e-12);
}

/* A fixed generator: the same draws on every run. */
static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Under the null the p-value is uniform: about 5% of tests fall under
 * 0.05 and 1% under 0.01 (4,000 trials: binomial sd 0.34 points at 5%).
 * Against a shift of one sd with 10 per side, Welch finds it about
 * half the time (the t-test's power there is 0.56). */
static void test_welch_distribution(void **state)
{
	int under5 = 0, under1 = 0, found = 0, n = 4000;
	double a[10], b[10];
	struct stats_result r;

	for (int t = 0; t < n; t++) {
		for (int i = 0; i < 10; i++) {
			a[i] = 0.3 + 0.05 * normal();
			b[i] = 0.3 + 0.08 * normal(); /* unequal variances */
		}
		assert_int_equal(stats_welch(a, 10, b, 10, &r), 0);
		under5 += r.p < 0.05;
		under1 += r.p < 0.01;
		for (int i = 0; i < 10; i++)
			b[i] = 0.35 + 0.05 * normal();
		assert_int_equal(stats_welch(a, 10, b, 10, &r), 0);
		found += r.p < 0.05;
	}
	assert_in_range(under5, n * 4 / 100, n * 6 / 100);
	assert_in_range(under1, n * 5 / 1000, n * 15 / 1000);
	assert_in_range(found, n * 45 / 100, n * 67 / 100);
}

/* The same for the two-proportion test on independent Bernoulli draws. */
static void test_two_prop_distribution(void **state)
{
	int under5 = 0, n = 2000;
	struct stats_result r;

	for (int t = 0; t < n; t++) {
		uint64_t x1 = 0, x2 = 0;
		for (int i = 0; i < 300; i++) {
			x1 += uniform() < 0.3;
			x2 += uniform() < 0.3;
		}
		assert_int_equal(stats_two_prop(x1, 300, x2, 300, &r), 0);
		under5 += r.p < 0.05;
	}
	assert_in_range(under5, n * 35 / 1000, n * 65 / 1000);
}

/* The gate's test: is the increase larger than a margin? Observed +7
 * points with a standard error of 4 (z): above 0 at p 0.04 (one-sided),
 * above 5 only at p 0.31; +30 with se 4 is above 5 at p < 1e-9. */
static void test_p_above(void **state)
{
	struct stats_result r = {.se = 4, .df = 0, .p = 0.08};
	assert_true(fabs(stats_p_above(&r, 7, 0) - 0.0401) < 0.001);
	assert_true(fabs(stats_p_above(&r, 7, 5) - 0.3085) < 0.001);
	assert_true(stats_p_above(&r, 30, 5) < 1e-9);
	assert_true(stats_p_above(&r, 3, 5) > 0.5);
	/* Student t, 4 df: t = 2.132 has an upper tail of 0.05 */
	r.df = 4;
	r.se = 1;
	assert_true(fabs(stats_p_above(&r, 7.132, 5) - 0.05) < 0.001);
	/* no spread: only an exact difference beyond the margin passes */
	struct stats_result z = {.se = 0, .p = 1};
	assert_true(stats_p_above(&z, 7, 5) == 1);
	/* the two-proportion test carries the unpooled standard error */
	assert_int_equal(stats_two_prop(30, 100, 60, 100, &r), 0);
	assert_true(fabs(r.se - sqrt(0.3 * 0.7 / 100 + 0.6 * 0.4 / 100)) < 1e-12);
}

TEST_MAIN(NULL, NULL, TEST(test_p_above), TEST(test_betainc), TEST(test_t_tail),
	  TEST(test_welch_known), TEST(test_welch_constant), TEST(test_two_prop), TEST(test_holm),
	  TEST(test_welch_distribution), TEST(test_two_prop_distribution))
