/* Unit tests for model/spikes: kept seconds split by the rhythm's threshold
 * and compared by model/diff. A function that burns in spike seconds only
 * is named with its rise; one that is the runtime's collector is flagged
 * GC; spike seconds that look like calm ones name nothing; no rhythm, no
 * risers; past the budget the spike seconds are kept over calm ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/model/diff.h"
#include "stacktop/model/spikes.h"
#include "stacktop/model/window.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/symbols/sym.h"

static struct frames *fr;

static int setup(void **state)
{
	(void)state;
	return frames_new(NULL, &fr);
}

static int teardown(void **state)
{
	(void)state;
	frames_free(fr);
	return 0;
}

static uint32_t frame(const char *func)
{
	struct sym_info si = {.func = func, .module = "prog"};
	int64_t id = frames_named(fr, &si);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* One second: main -> hot `spike` samples, main -> steady `calm`
 * samples, main -> other 5 (noise per second from seed). */
static struct diff_snap *second(const char *hot, unsigned spike, unsigned calm, unsigned *seed)
{
	struct diff_snap *sn;
	uint32_t a[2] = {frame("main"), frame(hot)}, b[2] = {frame("main"), frame("steady")},
		 c[2] = {frame("main"), frame("other")};

	*seed = *seed * 1103515245u + 12345u;
	assert_int_equal(diff_snap_new(&sn), 0);
	assert_int_equal(diff_snap_file(sn, NULL), 0);
	if (spike)
		assert_int_equal(diff_snap_add(sn, fr, a, 2, 0, spike + (*seed >> 16) % 5), 0);
	assert_int_equal(diff_snap_add(sn, fr, b, 2, 0, calm + (*seed >> 20) % 3), 0);
	assert_int_equal(diff_snap_add(sn, fr, c, 2, 0, 5), 0);
	return sn;
}

/* A new spikes kept n seconds of a rhythm at threshold 20% (spikes 2 s
 * every 5 s); free it. */
static struct spikes *filled(struct metrics *m, const char *hot, bool differ, size_t n)
{
	struct spikes *sp;
	unsigned seed = 7;

	assert_int_equal(spikes_new(&sp), 0);
	memset(m, 0, sizeof(*m));
	m->alert_rhythm = true;
	m->rhythm.thr = 20;
	for (size_t i = 0; i < n; i++) {
		bool spike = i % 5 < 2;
		struct diff_snap *sn = spike && differ ? second(hot, 90, 10, &seed)
						       : second(hot, differ ? 0 : 2, 20, &seed);
		assert_int_equal(spikes_keep(sp, sn, 100.0 + (double)i, spike ? 100 : 5, m), 0);
	}
	return sp;
}

/* filled, then compared: m says the risers. */
static struct spikes *compared(struct metrics *m, const char *hot, bool differ, size_t n)
{
	struct spikes *sp = filled(m, hot, differ, n);

	assert_int_equal(spikes_compare(sp, m), 0);
	return sp;
}

/* The first riser m names is func, a collector's or not (gc). */
static void assert_first_riser(const struct metrics *m, const char *func, bool gc)
{
	assert_true(m->nrisers >= 1);
	assert_string_equal(m->risers[0].func, func);
	assert_int_equal(m->risers[0].gc, gc);
}

static void test_names_the_riser(void **state)
{
	struct metrics m;
	struct spikes *sp = compared(&m, "spike_burn", true, 40);

	(void)state;
	assert_first_riser(&m, "spike_burn", false);
	assert_true(m.risers[0].pts > 60 && m.risers[0].pts < 95);
	/* main is in every stack of both sides, steady and other fell */
	for (unsigned i = 0; i < m.nrisers; i++)
		assert_string_not_equal(m.risers[i].func, "main");
	spikes_free(sp);
}

static void test_gc(void **state)
{
	struct metrics m;
	struct spikes *sp = compared(&m, "runtime.gcBgMarkWorker", true, 40);

	(void)state;
	assert_first_riser(&m, "runtime.gcBgMarkWorker", true);
	spikes_free(sp);
}

/* Spike seconds with the calm seconds' profile: CPU rose, no function's
 * share did. */
static void test_same_profile(void **state)
{
	struct metrics m;
	struct spikes *sp = compared(&m, "spike_burn", false, 60);

	(void)state;
	assert_int_equal(m.nrisers, 0);
	/* and no rhythm: nothing named, even with a difference */
	spikes_free(sp);
	sp = filled(&m, "spike_burn", true, 40);
	m.alert_rhythm = false;
	assert_int_equal(spikes_compare(sp, &m), 0);
	assert_int_equal(m.nrisers, 0);
	spikes_free(sp);
}

/* Past SPIKES_MAX_SECONDS calm seconds go first: 40 seconds of rhythm,
 * then calm seconds past the budget; the spikes are still named. */
static void test_budget(void **state)
{
	struct spikes *sp;
	struct metrics m;
	unsigned seed = 3;
	size_t bytes;

	(void)state;
	sp = filled(&m, "spike_burn", true, 40);
	for (size_t i = 0; i < SPIKES_MAX_SECONDS + 100; i++)
		assert_int_equal(
		    spikes_keep(sp, second("spike_burn", 0, 20, &seed), 200.0 + (double)i, 5, &m),
		    0);
	assert_int_equal(spikes_kept(sp, &bytes), SPIKES_MAX_SECONDS);
	assert_true(bytes > 0 && bytes <= SPIKES_BUDGET);
	assert_int_equal(spikes_compare(sp, &m), 0);
	assert_true(m.nrisers >= 1);
	assert_string_equal(m.risers[0].func, "spike_burn");
	spikes_free(sp);
}

/* The riser on the tick the rhythm is found: before it only the spike
 * seconds are kept (a target without a rhythm keeps no calm second), and
 * then the calm ones come from the window at once. 40 seconds (from 100)
 * spiking 2 s every 5 s in spike_burn, ticked one a second. */
static void test_backfill(void **state)
{
	uint32_t hot[2] = {frame("main"), frame("spike_burn")},
		 calm[2] = {frame("main"), frame("steady")};
	struct metrics_config mc;
	struct window *w;
	struct spikes *sp;
	struct metrics m;
	unsigned seed = 5, spikes = 0;
	size_t bytes;

	(void)state;
	assert_int_equal(window_new(60, 1000000000ull, fr, &w), 0);
	assert_int_equal(spikes_new(&sp), 0);
	metrics_config_default(&mc);
	assert_int_equal(metrics_init(&m, 0, &mc), 0);
	m.rhythm.thr = 20;
	for (unsigned i = 0; i < 40; i++) {
		uint64_t t = (100ull + i) * 1000000000ull + 400000000ull;
		bool spike = i % 5 < 2;

		seed = seed * 1103515245u + 12345u;
		spikes += spike;
		if (spike)
			assert_int_equal(window_add(w, t, 1, hot, 2, 90 + (seed >> 16) % 5), 0);
		assert_int_equal(window_add(w, t, 1, calm, 2, 5 + (seed >> 20) % 3), 0);
		/* the point at 101 + i covers second 100 + i */
		metrics_push_cpu(&m, 101.0 + i, spike ? 100 : 5);
		assert_int_equal(spikes_tick(sp, w, &m, 102.5 + i), 0);
	}
	/* No rhythm yet: the spike seconds only, no riser. */
	assert_int_equal(spikes_kept(sp, NULL), spikes);
	assert_int_equal(m.nrisers, 0);
	m.alert_rhythm = true;
	assert_int_equal(spikes_tick(sp, w, &m, 142.5), 0);
	assert_int_equal(spikes_kept(sp, &bytes), 40);
	assert_true(bytes > 0);
	assert_first_riser(&m, "spike_burn", false);
	assert_true(m.risers[0].pts > 60);
	metrics_free(&m);
	spikes_free(sp);
	window_free(w);
}

TEST_MAIN(setup, teardown, TEST(test_backfill), TEST(test_names_the_riser), TEST(test_gc),
	  TEST(test_same_profile), TEST(test_budget))
