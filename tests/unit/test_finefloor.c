/* Unit tests for finefloor: a step's excess given back to the pending
 * one; and verdicts from threads simulated as the kernel counts them
 * (schedsim.h): the floor target's pattern (1 s of work, 1.5 s asleep,
 * a 30 ms / 70 ms poller, an idler) is a busy floor held by the poller in
 * 2 s whatever its phase, on an idle box or a loaded one; a steady worker
 * starved by load, its waits lagging a step, beside a steady thread, is
 * none; a thread that bursts alone, a pool whose workers take turns, a
 * steady worker: none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/proc/finefloor.h"
#include "schedsim.h"

#define MS 1000000ull

static void to_floor(void *ctx, double t, const struct demand_step *st)
{
	finefloor_step(ctx, t, st);
}

/* th[0..n) read every 200 ms over [t0, t1] ms into a fresh f; its
 * verdict. */
static void run(struct finefloor *f, const struct sim_thread *th, size_t n, int t0, int t1,
		struct finefloor_verdict *v)
{
	memset(f, 0, sizeof(*f));
	sim_steps(th, n, t0, t1, 200, to_floor, f);
	finefloor_eval(f, v);
}

static uint8_t dem_at(const struct finefloor *f, size_t k)
{
	return f->th[0].dem[(f->head + k) % FINEFLOOR_STEPS];
}

/* A wait under way at a read: missing from its step, whole in the next,
 * which gives its excess back; a new thread has no past steps. */
static void test_give_back(void **state)
{
	static struct finefloor f;
	struct demand_step st = {.dt_ns = 200 * MS, .n = 1};

	st.delta[0] = (struct demand_ns){10, 50 * MS, 50 * MS}; /* ran 50, then waited */
	finefloor_step(&f, 0.2, &st);
	assert_int_equal(dem_at(&f, 0), 25);
	st.delta[0] = (struct demand_ns){10, 60 * MS, 350 * MS}; /* 150 of it the last step's */
	finefloor_step(&f, 0.4, &st);
	assert_int_equal(dem_at(&f, 0), 100);
	assert_int_equal(dem_at(&f, 1), 100);
	assert_int_equal(f.th[0].run[(f.head + 1) % FINEFLOOR_STEPS], 30);
	/* No excess: nothing given back; thread 11 new, none before. */
	st.n = 2;
	st.delta[0] = (struct demand_ns){10, 20 * MS, 20 * MS};
	st.delta[1] = (struct demand_ns){11, 200 * MS, 200 * MS};
	finefloor_step(&f, 0.6, &st);
	assert_int_equal(dem_at(&f, 1), 100);
	assert_int_equal(dem_at(&f, 2), 10);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.th[1].dem[f.head], FINEFLOOR_NONE);
	assert_int_equal(f.th[1].dem[(f.head + 2) % FINEFLOOR_STEPS], 100);
	assert_int_equal(f.len, 3);
	assert_true(f.pend_ns == 200 * MS);
}

/* The floor target: main 1 s of work (all CPU, or on a loaded box 25 %
 * of it, waiting the rest) then 1.5 s asleep, the poller 30 ms of 100,
 * the idler asleep; read for 2 s from any phase (as `-a -b -n 2`, the
 * first read a step after the start): a busy floor of ~30 %, held by the
 * poller alone. */
static void test_floor_target(void **state)
{
	static struct sim_thread th[3];
	static struct finefloor f;
	struct finefloor_verdict v;

	for (int loaded = 0; loaded < 2; loaded++) {
		for (int ph = 0; ph < 2500; ph += 100) {
			sim_cycle(&th[0], 100, 1000, 'R', 1500, 'S', ph);
			for (int i = 0; loaded && i < SIM_MS; i++)
				if (th[0].st[i] == 'R' && i % 40 >= 10)
					th[0].st[i] = 'W';
			sim_cycle(&th[1], 101, 30, 'R', 70, 'S', ph);
			sim_cycle(&th[2], 102, 1, 'S', 1, 'S', 0);
			run(&f, th, 3, 200, 2000, &v);
			if (v.pauses < FINEFLOOR_PAUSE_MIN || v.floor_pct < 20 ||
			    v.floor_pct > 40 || v.nholders != 1 || v.holder[0] != 101)
				fail_msg("phase %d%s: pauses %zu floor %.1f holders %zu (%d)", ph,
					 loaded ? " loaded" : "", v.pauses, v.floor_pct, v.nholders,
					 v.nholders ? v.holder[0] : 0);
			assert_float_equal(v.span_s, 1.8, 1e-6);
			assert_true(v.holder_pct[0] >= 20);
		}
	}
}

/* A steady worker starved by load (10 ms runs, waits of up to 350 ms: a
 * step may pass whole on a run queue, its wait counted only in the next)
 * beside a steady thread at 50 %: never a busy floor, over 2 s or 10 s,
 * though the raw steps do show the starved one "asleep" (the artifact is
 * there to give back). */
static void test_steady_starved(void **state)
{
	static struct sim_thread th[2];
	static struct finefloor f;
	struct finefloor_verdict v;
	unsigned seed = 1;
	size_t raw_asleep = 0;

	for (int trial = 0; trial < 60; trial++) {
		sim_starved(&th[0], 200, 10, 350, &seed);
		sim_cycle(&th[1], 201, 10, 'R', 10, 'W', 0);
		for (int t = 400; t <= 10000; t += 200) {
			struct demand_ns a = sim_read(&th[0], t - 200), b = sim_read(&th[0], t);
			raw_asleep += b.dem - a.dem < 10 * MS;
		}
		for (int len = 2000; len <= 10000; len += 8000) {
			run(&f, th, 2, 200, 200 + len, &v);
			if (v.pauses >= FINEFLOOR_PAUSE_MIN)
				fail_msg("trial %d, %d ms: %zu pauses, floor %.1f", trial, len,
					 v.pauses, v.floor_pct);
			assert_true(v.floor_pct > 20); /* its floor: high CPU, no pauses */
		}
	}
	assert_true(raw_asleep > 0);
}

/* No floor: a thread that works and sleeps alone (its pauses hold no
 * CPU); a pool of four workers taking turns, one always at work (no step
 * at which all sleep); a steady worker (no thread sleeps), also beside a
 * housekeeping thread that wakes every 0.6 s, waits 150 ms on a loaded
 * run queue and runs 1 ms (demand, hardly any work: no burst). */
static void test_no_floor(void **state)
{
	static struct sim_thread th[4];
	static struct finefloor f;
	struct finefloor_verdict v;
	unsigned seed = 7;

	for (int trial = 0; trial < 20; trial++) {
		th[0].tid = 300;
		for (int i = 0; i < SIM_MS;) {
			int busy = 100 + (int)(rand_r(&seed) % 500),
			    rest = 100 + (int)(rand_r(&seed) % 500);
			sim_fill(&th[0], i, i + busy, 'R');
			sim_fill(&th[0], i + busy, i + busy + rest, 'S');
			i += busy + rest;
		}
		run(&f, th, 1, 200, 4200, &v);
		assert_true(v.pauses == 0 || v.floor_pct < 5);
	}
	for (int k = 0; k < 4; k++)
		sim_cycle(&th[k], 310 + k, 150, 'R', 450, 'S', 450 - k * 150);
	run(&f, th, 4, 200, 4200, &v);
	assert_int_equal(v.pauses, 0);
	assert_true(v.floor_pct > 50);
	sim_cycle(&th[0], 320, 1, 'R', 0, 'R', 0);
	run(&f, th, 1, 200, 2200, &v);
	assert_int_equal(v.pauses, 0);
	assert_float_equal(v.floor_pct, 100, 1);
	assert_int_equal(v.nholders, 0);
	for (int ph = 0; ph < 600; ph += 50) {
		sim_cycle(&th[1], 321, 150, 'W', 450, 'S', ph);
		for (int i = 0; i < SIM_MS; i++)
			if (th[1].st[i] == 'S' && i > 0 && th[1].st[i - 1] == 'W')
				th[1].st[i] = 'R';
		run(&f, th, 2, 200, 2200, &v);
		assert_int_equal(v.pauses, 0);
	}
}

TEST_MAIN(NULL, NULL, TEST(test_give_back), TEST(test_floor_target), TEST(test_steady_starved),
	  TEST(test_no_floor))
