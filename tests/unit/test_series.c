/* Unit tests for the series maths on synthetic series: the ring, floor and
 * baseline, Theil-Sen, stairs vs rollercoaster vs flat (noisy stairs, a
 * single big allocation, a sawtooth), time to a limit, spike timing. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/series.h"

#define MIB (1024.0 * 1024.0)

/* Deterministic noise in [-1, 1]. */
static double noise(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return ((*seed >> 16) & 0x7fff) / 16383.5 - 1.0;
}

static void test_ring(void **state)
{
	struct series s;
	double t[8], v[8];
	assert_int_equal(series_init(&s, 4), 0);
	assert_int_equal(series_get(&s, t, v, 8), 0);
	assert_true(series_last(&s) == 0);
	for (int i = 0; i < 10; i++)
		series_push(&s, i, i * 10);
	assert_int_equal(series_get(&s, t, v, 8), 4);
	assert_true(t[0] == 6 && v[0] == 60 && t[3] == 9 && v[3] == 90);
	assert_true(series_last(&s) == 90);
	/* Only the newest when the caller has less room. */
	assert_int_equal(series_get(&s, t, v, 2), 2);
	assert_true(v[0] == 80 && v[1] == 90);
	assert_int_equal(series_since(&s, 8, t, v, 8), 2);
	assert_true(t[0] == 8);
	series_clear(&s);
	assert_int_equal(series_get(&s, t, v, 8), 0);
	series_free(&s);
	assert_int_equal(series_init(&s, 0), -EINVAL);
}

static void test_percentiles(void **state)
{
	double v[] = {5, 1, 4, 2, 3, 9, 7, 8, 6, 10};
	assert_float_equal(series_median(v, 10), 5.5, 1e-9);
	assert_float_equal(series_percentile(v, 10, 0.0), 1, 1e-9);
	assert_float_equal(series_percentile(v, 10, 1.0), 10, 1e-9);
	assert_float_equal(series_percentile(v, 10, 0.1), 1.9, 1e-9);
	assert_float_equal(series_max(v, 10), 10, 1e-9);
	assert_float_equal(series_min(v, 10), 1, 1e-9);
	assert_float_equal(series_percentile(v, 0, 0.5), 0, 1e-9);
	/* Floor of a busy process: bursts to 100% over a 30% floor. */
	double cpu[60];
	for (int i = 0; i < 60; i++)
		cpu[i] = (i % 10) < 3 ? 100 : 30;
	assert_float_equal(series_percentile(cpu, 60, 0.1), 30, 1e-9);
}

static void test_theil_sen_ignores_outliers(void **state)
{
	double t[100], v[100];
	for (int i = 0; i < 100; i++) {
		t[i] = i;
		v[i] = 3.0 * i + 7;
	}
	v[10] = 1e9; /* a wild outlier a least-squares fit would follow */
	v[50] = -1e9;
	assert_float_equal(series_theil_sen(t, v, 100), 3.0, 1e-6);
	/* Thinning keeps the slope on long inputs. */
	double t2[3000], v2[3000];
	for (int i = 0; i < 3000; i++) {
		t2[i] = i * 0.5;
		v2[i] = -2.0 * t2[i];
	}
	assert_float_equal(series_theil_sen(t2, v2, 3000), -2.0, 1e-6);
}

/* Theil-Sen's median (found by selection, not a sort) is the median of
 * every pairwise slope as series_median gives it: odd and even counts,
 * ties, a few points and many. */
static void test_theil_sen_is_the_median_slope(void **state)
{
	static double t[200], v[200], slopes[200 * 199 / 2];
	unsigned seed = 12345;
	size_t sizes[] = {2, 3, 4, 5, 7, 16, 33, 200};

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (int round = 0; round < 20; round++) {
			size_t n = sizes[si], ns = 0;
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				t[i] = (double)i;
				/* Few distinct values on odd rounds: many equal slopes. */
				v[i] = (double)((seed >> 16) % (round % 2 ? 4 : 1000));
			}
			for (size_t i = 0; i < n; i++)
				for (size_t j = i + 1; j < n; j++)
					slopes[ns++] = (v[j] - v[i]) / (t[j] - t[i]);
			assert_true(series_theil_sen(t, v, n) == series_median(slopes, ns));
		}
}

/* The trend, at 1 MiB resolution, of n samples of f one a second from
 * t = 0 (seed for its noise). */
static struct series_trend trend_of(double (*f)(int i, unsigned *seed), int n, unsigned seed)
{
	double t[128], v[128];
	struct series_trend tr;

	assert_true(n <= 128);
	for (int i = 0; i < n; i++) {
		t[i] = i;
		v[i] = f(i, &seed);
	}
	assert_int_equal(series_trend(t, v, (size_t)n, 1 * MIB, &tr), 0);
	return tr;
}

/* 1 MiB/s with +-0.3 MiB of noise. */
static double leak(int i, unsigned *seed)
{
	return 200 * MIB + i * MIB + 0.3 * MIB * noise(seed);
}

static void test_leak_is_stairs(void **state)
{
	struct series_trend tr = trend_of(leak, 60, 1);
	assert_int_equal(tr.kind, SERIES_STAIRS);
	assert_int_equal(tr.drops, 0);
	assert_true(fabs(tr.slope - MIB) < 0.05 * MIB);
	assert_float_equal(tr.since_drop_s, 59, 1e-9);
}

/* +10 MiB every 10 s, +-2 MiB noise. */
static double noisy_steps(int i, unsigned *seed)
{
	return 100 * MIB + (i / 10) * 10 * MIB + 2 * MIB * noise(seed);
}

static void test_noisy_stairs(void **state)
{
	/* Still stairs. */
	struct series_trend tr = trend_of(noisy_steps, 120, 7);
	assert_int_equal(tr.kind, SERIES_STAIRS);
	assert_true(tr.slope > 0.7 * MIB && tr.slope < 1.3 * MIB);
}

static double one_jump(int i, unsigned *seed)
{
	return i < 30 ? 100 * MIB : 400 * MIB;
}

static void test_single_jump_is_not_a_leak(void **state)
{
	struct series_trend tr = trend_of(one_jump, 60, 0);
	assert_int_equal(tr.kind, SERIES_FLAT);
}

/* Rise 100 → 500 MiB over 20 s, fall back. */
static double sawtooth(int i, unsigned *seed)
{
	return 100 * MIB + (i % 20) * 20 * MIB;
}

static void test_sawtooth_is_rollercoaster(void **state)
{
	/* Three times. */
	struct series_trend tr = trend_of(sawtooth, 60, 0);
	assert_int_equal(tr.kind, SERIES_ROLLERCOASTER);
	assert_int_equal(tr.drops, 2);
	assert_float_equal(tr.peak_hi, 480 * MIB, 1);
	assert_float_equal(tr.peak_lo, 480 * MIB, 1);
	assert_float_equal(tr.drop_every_s, 59.0 / 2, 1e-9);
	assert_float_equal(tr.since_drop_s, 19, 1e-9);
}

static double flat_noise(int i, unsigned *seed)
{
	return 300 * MIB + 0.4 * MIB * noise(seed);
}

static void test_flat_noise(void **state)
{
	struct series_trend tr = trend_of(flat_noise, 60, 3);
	assert_int_equal(tr.kind, SERIES_FLAT);
	/* Too short to say anything. */
	tr = trend_of(flat_noise, 3, 3);
	assert_int_equal(tr.kind, SERIES_FLAT);
	double t[1] = {0}, v[1] = {0};
	assert_int_equal(series_trend(t, v, 0, 1 * MIB, &tr), -EINVAL);
}

static void test_time_to_limit(void **state)
{
	assert_float_equal(series_time_to(1000, 10, 2000), 100, 1e-9);
	assert_float_equal(series_time_to(1000, 0, 2000), -1, 1e-9);
	assert_float_equal(series_time_to(1000, -5, 2000), -1, 1e-9);
	assert_float_equal(series_time_to(3000, 5, 2000), -1, 1e-9);
	assert_float_equal(series_time_to(1000, 5, 0), -1, 1e-9);
}

static void test_spike_timing(void **state)
{
	struct series_spike sp;
	double held;
	series_spike_init(&sp);
	/* Baseline 40%: 2x is 80%. At 100% from t=5 on, with for_s = 30. */
	for (int t = 0; t < 5; t++)
		assert_false(series_spike_update(&sp, t, 50, 40, 2.0, 30, &held));
	for (int t = 5; t < 35; t++)
		assert_false(series_spike_update(&sp, t, 100, 40, 2.0, 30, &held));
	assert_true(series_spike_update(&sp, 35, 100, 40, 2.0, 30, &held));
	assert_float_equal(held, 30, 1e-9);
	/* One second back under the line resets it. */
	assert_false(series_spike_update(&sp, 36, 70, 40, 2.0, 30, &held));
	assert_false(series_spike_update(&sp, 37, 100, 40, 2.0, 30, &held));
	/* No baseline: no alert. */
	assert_false(series_spike_update(&sp, 100, 100, 0, 2.0, 0, &held));
}

/* ---- bursts and pauses (issue 24 item 7) ---- */

#define STEPS 100 /* 10 s of ~100 ms steps */

/* Thread rows, classified as metrics does: row[j][i] from cpu[j][i] and
 * running[j][i]. */
static void classify(const double cpu[][STEPS], const bool run[][STEPS], size_t nth,
		     unsigned char *st)
{
	for (size_t j = 0; j < nth; j++)
		for (size_t i = 0; i < STEPS; i++)
			st[j * STEPS + i] = (unsigned char)series_step_of(cpu[j][i], run[j][i]);
}

/* Two identical spinners starved at random by other load (40..100% each,
 * always runnable): steady work, no pauses, whatever the dips. */
static void test_pauses_steady_spinners(void **state)
{
	static double cpu[2][STEPS];
	static bool run[2][STEPS];
	unsigned char st[2 * STEPS];
	bool pause[STEPS];
	unsigned seed = 7;

	for (int j = 0; j < 2; j++)
		for (int i = 0; i < STEPS; i++) {
			cpu[j][i] = 70 + 30 * noise(&seed);
			run[j][i] = true;
		}
	/* Even a step with no CPU at all: starved, still runnable. */
	cpu[0][10] = cpu[0][11] = cpu[0][12] = cpu[0][13] = 0;
	classify(cpu, run, 2, st);
	assert_int_equal(series_pauses(st, 2, STEPS, pause), 0);
	for (int i = 0; i < STEPS; i++)
		assert_false(pause[i]);
}

/* A worker that works 1 s and sleeps 1 s beside two pollers (30% and 20%
 * every step): the pauses are the worker's sleeps, the floor in them is
 * the pollers' 50%, and each poller's level there is its own. */
static void test_pauses_bursts_over_pollers(void **state)
{
	static double cpu[3][STEPS];
	static bool run[3][STEPS];
	unsigned char st[3 * STEPS];
	bool pause[STEPS];
	double proc[STEPS];

	for (int i = 0; i < STEPS; i++) {
		bool works = i / 10 % 2 == 0;
		cpu[0][i] = works ? 100 : 0;
		run[0][i] = works;
		cpu[1][i] = 30;
		run[1][i] = i % 3 == 0; /* a poller is asleep at most step ends */
		cpu[2][i] = 20;
		proc[i] = cpu[0][i] + cpu[1][i] + cpu[2][i];
	}
	classify(cpu, run, 3, st);
	assert_int_equal(series_pauses(st, 3, STEPS, pause), 50);
	for (int i = 0; i < STEPS; i++)
		assert_int_equal(pause[i], i / 10 % 2 == 1);
	assert_float_equal(series_median_at(proc, NULL, pause, STEPS), 50, 1e-9);
	assert_float_equal(series_median_at(cpu[1], st + STEPS, pause, STEPS), 30, 1e-9);
	assert_float_equal(series_median_at(cpu[2], st + 2 * STEPS, pause, STEPS), 20, 1e-9);
	assert_float_equal(series_median_at(cpu[0], st, pause, STEPS), 0, 1e-9);
}

/* Two workers that take turns (one always busy) leave no pause; a poller
 * that misses a wake-up now and then (a few idle steps) does not burst. */
static void test_pauses_need_every_burster_idle(void **state)
{
	static double cpu[3][STEPS];
	static bool run[3][STEPS];
	unsigned char st[3 * STEPS];
	bool pause[STEPS];

	for (int i = 0; i < STEPS; i++) {
		bool a = i / 10 % 2 == 0;
		cpu[0][i] = a ? 100 : 0;
		run[0][i] = a;
		cpu[1][i] = a ? 0 : 100;
		run[1][i] = !a;
		cpu[2][i] = i % 20 == 5 ? 0 : 30;
		run[2][i] = false;
	}
	classify(cpu, run, 3, st);
	assert_int_equal(series_pauses(st, 3, STEPS, pause), 0);
	/* Only the poller and one worker: the worker's sleeps are pauses,
	 * the poller's missed wake-ups are not bursts. */
	assert_int_equal(series_pauses(st + STEPS, 2, STEPS, pause), 50);
	/* Steps no bursting thread was measured at are not pauses. */
	memset(st + STEPS, SERIES_STEP_NONE, 20);
	assert_int_equal(series_pauses(st + STEPS, 2, STEPS, pause), 40);
	assert_float_equal(series_median_at(cpu[0], NULL, pause, 0), -1, 1e-9);
}

TEST_MAIN(NULL, NULL, TEST(test_ring), TEST(test_percentiles),
	  TEST(test_theil_sen_ignores_outliers), TEST(test_theil_sen_is_the_median_slope),
	  TEST(test_leak_is_stairs), TEST(test_noisy_stairs), TEST(test_single_jump_is_not_a_leak),
	  TEST(test_sawtooth_is_rollercoaster), TEST(test_flat_noise), TEST(test_time_to_limit),
	  TEST(test_spike_timing), TEST(test_pauses_steady_spinners),
	  TEST(test_pauses_bursts_over_pollers), TEST(test_pauses_need_every_burster_idle))
