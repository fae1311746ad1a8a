/* Unit tests for rhythm detection on synthetic per-second series: periodic
 * spikes at several periods and durations give their period, duration and
 * levels; steady, slowly rising, noisy, randomly timed bursts and too few
 * spikes give none. The same detector on a memory's falls (a sawtooth
 * says so, a leak, a steady level with noise or falls at random times do
 * not) and, through metrics, on one thread's CPU hidden in the process's
 * sum. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/metrics.h"
#include "stacktop/proc/rhythm.h"
#include "stacktop/proc/series.h"

#define N 1800

static double t[N], v[N], scratch[4 * N];

/* Deterministic noise in [-1, 1]. */
static double noise(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return ((*seed >> 16) & 0x7fff) / 16383.5 - 1.0;
}

/* n seconds at calm +- jitter, spikes of dur seconds to level every period
 * seconds from phase. */
static void periodic(size_t n, double calm, double level, unsigned period, unsigned dur,
		     unsigned phase, double jitter, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		t[i] = 100 + (double)i;
		v[i] = ((i + period - phase % period) % period) < dur ? level : calm;
		v[i] += jitter * noise(&seed);
		if (v[i] < 0)
			v[i] = 0;
	}
}

static void test_periodic(void **state)
{
	static const struct {
		unsigned period, dur;
		double calm, level;
		size_t n;
	} cases[] = {
	    {15, 3, 20, 100, 100}, {5, 1, 20, 100, 30},	  {5, 2, 10, 90, 30},
	    {60, 5, 5, 100, 400},  {120, 10, 30, 200, N}, {8, 1, 0, 50, 60},
	};
	struct rhythm r;

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		periodic(cases[c].n, cases[c].calm, cases[c].level, cases[c].period, cases[c].dur,
			 3, 3, 7 + (unsigned)c);
		assert_true(rhythm_find(t, v, cases[c].n, scratch, &r));
		assert_true(fabs(r.period_s - cases[c].period) < 0.01);
		assert_true(r.spread_s < 0.01);
		assert_true(fabs(r.duration_s - cases[c].dur) < 0.25);
		assert_true(fabs(r.level - cases[c].level) <= 3);
		assert_true(fabs(r.calm - cases[c].calm) <= 3);
		assert_true(r.p < RHYTHM_P_MAX);
	}
}

/* One-second points around a 5 s period: onsets 1 s early or late now and
 * then (the tick and the burst drift), still a rhythm, with its spread. */
static void test_jittered(void **state)
{
	struct rhythm r;
	unsigned seed = 5;
	size_t n = 60;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		t[i] = (double)i;
		v[i] = 20 + 4 * noise(&seed);
	}
	for (size_t on = 3, k = 0; on + 1 < n; on += (k++ % 3 == 1) ? 6 : 5)
		v[on] = 100, v[on + 1] = 60;
	assert_true(rhythm_find(t, v, n, scratch, &r));
	assert_true(r.period_s >= 4.99 && r.period_s <= 5.01);
	assert_true(r.spread_s >= 0.99 && r.spread_s <= 1.01);
	/* 100 then 60 over 20: 80 + 40 above calm, 1.5 peaks' worth. */
	assert_true(r.duration_s >= 1.3 && r.duration_s <= 1.7);
}

/* One spike of a 5 s rhythm too small to cross the threshold (the box
 * was busy): the 10 s interval stands for two, still a rhythm of 5 s;
 * two missed in six intervals are too many. */
static void test_missed_spike(void **state)
{
	struct rhythm r;
	size_t n = 36;

	(void)state;
	periodic(n, 20, 100, 5, 1, 3, 3, 11);
	v[18] = 25; /* the spike at 18 (onsets 2, 7, 12, 17 + 1...) squeezed */
	for (size_t i = 0; i < n; i++)
		if (v[i] > 60 && i >= 15 && i <= 19)
			v[i] = 25;
	assert_true(rhythm_find(t, v, n, scratch, &r));
	assert_true(fabs(r.period_s - 5) < 0.01);
	for (size_t i = 0; i < n; i++)
		if (v[i] > 60 && i >= 25 && i <= 29)
			v[i] = 25;
	assert_false(rhythm_find(t, v, n, scratch, &r));
}

static void test_steady_and_rising(void **state)
{
	struct rhythm r;
	unsigned seed = 11;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		t[i] = (double)i;
		v[i] = 100 + 10 * noise(&seed);
	}
	assert_false(rhythm_find(t, v, N, scratch, &r));
	for (size_t i = 0; i < N; i++)
		v[i] = 10 + 90.0 * (double)i / N + 5 * noise(&seed);
	assert_false(rhythm_find(t, v, N, scratch, &r));
	for (size_t i = 0; i < N; i++)
		v[i] = 0;
	assert_false(rhythm_find(t, v, N, scratch, &r));
}

/* Noise of every kind: uniform, and heavy-tailed (exponential) that puts
 * many seconds above twice the median at random. */
static void test_noise(void **state)
{
	struct rhythm r;

	(void)state;
	for (unsigned seed = 1; seed < 40; seed++) {
		unsigned s = seed;
		for (size_t i = 0; i < N; i++) {
			t[i] = (double)i;
			v[i] = 50 + 50 * noise(&s);
		}
		assert_false(rhythm_find(t, v, N, scratch, &r));
		for (size_t i = 0; i < N; i++)
			v[i] = -20 * log((noise(&s) + 1.0001) / 2.0001);
		assert_false(rhythm_find(t, v, N, scratch, &r));
		for (size_t i = 0; i < 60; i++)
			v[i] = -20 * log((noise(&s) + 1.0001) / 2.0001);
		assert_false(rhythm_find(t, v, 60, scratch, &r));
	}
}

/* Read every second, as metrics does: no prefix of 100 s of noise (uniform
 * or one-second bursts at random) says rhythm. */
static void test_noise_every_second(void **state)
{
	struct rhythm r;

	(void)state;
	for (unsigned seed = 1; seed < 20; seed++) {
		unsigned s = seed * 31;
		for (size_t i = 0; i < 100; i++) {
			t[i] = (double)i;
			v[i] = 50 + 50 * noise(&s);
		}
		for (size_t n = 6; n <= 100; n++)
			assert_false(rhythm_find(t, v, n, scratch, &r));
		for (size_t i = 0; i < 100; i++)
			v[i] = noise(&s) < -0.7 ? 100 : 20 + 5 * noise(&s);
		for (size_t n = 6; n <= 100; n++)
			assert_false(rhythm_find(t, v, n, scratch, &r));
	}
}

/* Bursts at random times (Poisson, mean 15 s apart), each 1-3 s: spikes
 * aplenty, no rhythm. */
static void test_random_bursts(void **state)
{
	struct rhythm r;

	(void)state;
	for (unsigned seed = 1; seed < 40; seed++) {
		unsigned s = seed * 7919;
		size_t sizes[] = {60, 300, N};
		for (size_t i = 0; i < N; i++) {
			t[i] = (double)i;
			v[i] = 20 + 3 * noise(&s);
		}
		for (double on = 1;;) {
			on += -15 * log((noise(&s) + 1.0001) / 2.0001);
			if (on >= N)
				break;
			for (size_t d = 0, dur = 1 + (size_t)(1.5 * (noise(&s) + 1)); d < dur; d++)
				if ((size_t)on + d < N)
					v[(size_t)on + d] = 100;
		}
		for (size_t k = 0; k < 3; k++)
			assert_false(rhythm_find(t, v, sizes[k], scratch, &r));
	}
}

/* Two spikes, however regular, are not a rhythm; nor is one that started
 * before the series (its onset unknown) counted. */
static void test_too_few(void **state)
{
	struct rhythm r;

	(void)state;
	periodic(25, 20, 100, 10, 2, 5, 0, 1);
	assert_false(rhythm_find(t, v, 25, scratch, &r));
	assert_true(r.spikes == 2);
	periodic(21, 20, 100, 10, 2, 0, 0, 1);
	assert_false(rhythm_find(t, v, 21, scratch, &r));
	assert_true(r.spikes == 2);
}

/* A rhythm that stopped: no spike for many periods since. */
static void test_stopped(void **state)
{
	struct rhythm r;

	(void)state;
	periodic(200, 20, 100, 10, 2, 3, 0, 1);
	assert_true(rhythm_find(t, v, 200, scratch, &r));
	for (size_t i = 100; i < 200; i++)
		v[i] = 20;
	assert_false(rhythm_find(t, v, 200, scratch, &r));
}

#define MIB (1024.0 * 1024)

/* n seconds of RSS into a new series (free it). */
static struct series rss_series(size_t n, double (*rss)(size_t i, unsigned *seed), unsigned seed)
{
	struct series sr;

	assert_int_equal(series_init(&sr, n), 0);
	for (size_t i = 0; i < n; i++)
		series_push(&sr, 100 + (double)i, rss(i, &seed));
	return sr;
}

/* A collector's sawtooth: 200 MiB, rising 8 MiB a second for 9 s, then
 * back (period 10), with a little noise. */
static double sawtooth(size_t i, unsigned *seed)
{
	return 200 * MIB + 8 * MIB * (double)((i + 3) % 10) + 0.2 * MIB * noise(seed);
}

/* A leak: 1 MiB a second, with noise that frees some now and then. */
static double leak(size_t i, unsigned *seed)
{
	return 100 * MIB + MIB * (double)i + 2 * MIB * noise(seed);
}

/* A level with noise of +-4 MiB each second. */
static double noisy(size_t i, unsigned *seed)
{
	return 300 * MIB + 4 * MIB * noise(seed);
}

/* Falls of 40 MiB at random times (after a rise of as much). */
static double random_falls(size_t i, unsigned *seed)
{
	static double level;

	if (i == 0)
		level = 100 * MIB;
	level += noise(seed) > 0.6 ? -40 * MIB : (level < 100 * MIB ? 40 * MIB : 0);
	return level;
}

static void test_memory_falls(void **state)
{
	double (*const none[])(size_t, unsigned *) = {leak, noisy, random_falls};
	struct series sr = rss_series(120, sawtooth, 3);
	struct rhythm r;

	(void)state;
	assert_true(rhythm_series_falls(&sr, METRICS_SWING_MIN, METRICS_SWING_FRAC, &r));
	assert_true(fabs(r.period_s - 10) < 0.01);
	assert_true(r.level > 70 * MIB && r.level < 75 * MIB);
	series_free(&sr);
	for (size_t k = 0; k < sizeof(none) / sizeof(none[0]); k++)
		for (unsigned seed = 1; seed < 20; seed++) {
			sr = rss_series(seed % 2 ? 120 : 600, none[k], seed);
			assert_false(
			    rhythm_series_falls(&sr, METRICS_SWING_MIN, METRICS_SWING_FRAC, &r));
			series_free(&sr);
		}
}

/* metrics: three threads, two steady at a core each, one spiking a core
 * for 2 s every 5 s: the process's sum (200% to 300%) is no rhythm, the
 * thread's is, named by its tid. Without the spiking thread, none; with
 * RSS on a sawtooth, the memory's. */
static void test_metrics_thread_and_memory(void **state)
{
	struct metrics_config mc;
	struct metrics m;
	unsigned seed = 9;

	(void)state;
	metrics_config_default(&mc);
	for (int spiky = 0; spiky < 2; spiky++) {
		assert_int_equal(metrics_init(&m, 0, &mc), 0);
		for (size_t i = 0; i < 60; i++) {
			double ts = 100 + (double)i, burst = spiky && i % 5 < 2 ? 100 : 0;
			uint64_t anon = (uint64_t)(spiky ? sawtooth(i, &seed) : noisy(i, &seed));
			metrics_push_thread(&m, ts, 11, "steady-a", 'R', 100 + noise(&seed));
			metrics_push_thread(&m, ts, 12, "steady-b", 'R', 100 + noise(&seed));
			metrics_push_thread(&m, ts, 13, "ticker", burst ? 'R' : 'S', burst);
			metrics_push_process(&m, ts, 200 + burst, anon, 0, 0);
			metrics_eval(&m, ts);
		}
		assert_false(m.alert_rhythm);
		assert_int_equal(m.alert_thread_rhythm, spiky);
		assert_int_equal(m.alert_mem_rhythm, spiky);
		if (spiky) {
			assert_int_equal(m.rhythm_tid, 13);
			assert_string_equal(m.rhythm_comm, "ticker");
			assert_true(fabs(m.thread_rhythm.period_s - 5) < 0.01);
			assert_true(fabs(m.mem_rhythm.period_s - 10) < 0.01);
		}
		metrics_free(&m);
	}
}

TEST_MAIN(NULL, NULL, TEST(test_memory_falls), TEST(test_metrics_thread_and_memory),
	  TEST(test_periodic), TEST(test_jittered), TEST(test_missed_spike),
	  TEST(test_steady_and_rising), TEST(test_noise), TEST(test_noise_every_second),
	  TEST(test_random_bursts), TEST(test_too_few), TEST(test_stopped))
