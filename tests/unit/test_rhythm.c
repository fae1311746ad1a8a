/* Unit tests for rhythm detection on synthetic per-second series: periodic
 * spikes at several periods and durations give their period, duration and
 * levels; steady, slowly rising, noisy, randomly timed bursts and too few
 * spikes give none. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/rhythm.h"

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

TEST_MAIN(NULL, NULL, TEST(test_periodic), TEST(test_jittered), TEST(test_missed_spike),
	  TEST(test_steady_and_rising), TEST(test_noise), TEST(test_noise_every_second),
	  TEST(test_random_bursts), TEST(test_too_few), TEST(test_stopped))
