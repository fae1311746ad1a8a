/* Unit tests for metrics: readings and alerts on synthetic pushes (floor,
 * baseline, busy floor, spike timing, stairs/rollercoaster/flat verdicts,
 * time to the limit, thread flags), the text helpers, and one live test
 * that ticks on our own process. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "helpers.h"

#include "stacktop/lib/text.h"
#include "stacktop/proc/metrics.h"
#include "stacktop/ui/view_chart.h" /* the words for the readings */
#include "stacktop/ui/view_threads.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

static void init(struct metrics *m, unsigned window_s)
{
	struct metrics_config c;
	metrics_config_default(&c);
	c.window_s = window_s;
	assert_int_equal(metrics_init(m, 0, &c), 0);
}

/* Deterministic noise in [-1, 1]. */
static double noise(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return ((*seed >> 16) & 0x7fff) / 16383.5 - 1.0;
}

static void push_cpu(struct metrics *m, double t, double cpu)
{
	metrics_push_process(m, t, cpu, 100 * MIB, 10 * MIB, 0);
	metrics_eval(m, t);
}

static void test_floor_baseline(void **state)
{
	struct metrics m;
	init(&m, 120);
	/* First minute around 100%, the second around 300%. */
	for (int i = 0; i < 60; i++) {
		push_cpu(&m, 1000 + i, 95 + (i % 11));
		if (i == 30)
			assert_false(m.baseline_set); /* first minute not complete */
	}
	assert_true(m.baseline_set);
	assert_false(m.baseline_manual);
	assert_float_equal(m.cpu_baseline, 100, 0.5);
	for (int i = 60; i < 120; i++)
		push_cpu(&m, 1000 + i, 300);
	/* The first-minute baseline stays; floor is p10 over the window. */
	assert_float_equal(m.cpu_baseline, 100, 0.5);
	assert_true(m.cpu_floor > 95 && m.cpu_floor < 106);
	assert_float_equal(m.cpu_peak, 300, 1e-9);
	assert_float_equal(m.cpu_now, 300, 1e-9);
	assert_float_equal(m.t0, 1000, 1e-9);

	/* 'b': the median of the last 10 seconds. */
	push_cpu(&m, 1120, 250);
	metrics_baseline_now(&m);
	assert_true(m.baseline_set && m.baseline_manual);
	assert_float_equal(m.cpu_baseline, 300, 1e-9);
	/* 'B': gone, and it does not come back by itself. */
	metrics_baseline_clear(&m);
	for (int i = 121; i < 130; i++)
		push_cpu(&m, 1000 + i, 300);
	assert_false(m.baseline_set);
	assert_false(m.alert_spike);
	metrics_free(&m);

	/* A window shorter than the baseline period: the first window. */
	init(&m, 30);
	for (int i = 0; i < 29; i++)
		push_cpu(&m, i, 40);
	assert_false(m.baseline_set);
	push_cpu(&m, 29, 40);
	assert_true(m.baseline_set);
	assert_float_equal(m.cpu_baseline, 40, 1e-9);
	metrics_free(&m);
}

/* A thread of a synthetic process: its CPU % in fine step k (ten a
 * second), or a steady pct where cpu is NULL; when spins, runnable at
 * every step's end (starved by other load, not asleep). */
struct synth {
	pid_t tid;
	const char *comm;
	double (*cpu)(int k);
	bool spins;
	double pct;
};

static double synth_cpu(const struct synth *t, int k)
{
	return t->cpu ? t->cpu(k) : t->pct;
}

/* seconds of the threads ths[0..n): each second, the one-second points
 * (the mean of its ten steps) of each thread and of the process, then the
 * ten fine steps, then metrics_eval. */
static void run_synth(struct metrics *m, const struct synth *ths, int n, int seconds)
{
	for (int i = 0; i < seconds; i++) {
		double sum = 0;
		for (int j = 0; j < n; j++) {
			double c = 0;
			for (int k = 0; k < METRICS_FINE_PER_S; k++)
				c += synth_cpu(&ths[j], i * METRICS_FINE_PER_S + k) /
				     METRICS_FINE_PER_S;
			double last =
			    synth_cpu(&ths[j], i * METRICS_FINE_PER_S + METRICS_FINE_PER_S - 1);
			metrics_push_thread(m, i, ths[j].tid, ths[j].comm,
					    ths[j].spins || last > 0 ? 'R' : 'S', c);
			sum += c;
		}
		metrics_push_process(m, i, sum, 100 * MIB, 10 * MIB, 0);
		for (int k = 0; k < METRICS_FINE_PER_S; k++) {
			int step = i * METRICS_FINE_PER_S + k;
			double ft = i - 0.9 + k * 0.1, proc = 0;
			for (int j = 0; j < n; j++) {
				double c = synth_cpu(&ths[j], step);
				proc += c;
				metrics_push_thread_fine(m, ft, ths[j].tid, c,
							 ths[j].spins || c > 0 ? 'R' : 'S');
			}
			metrics_push_fine(m, ft, proc);
		}
		metrics_eval(m, i);
	}
}

static double worker_1s_1s(int k)
{
	return k / 10 % 2 ? 0 : 100;
}

static double spin_100(int k)
{
	return 100;
}

/* A spinner that other load starves at random: 40..100% a step, some
 * steps nothing at all, always runnable. */
static double spin_starved(int k)
{
	unsigned seed = (unsigned)k * 2654435761u;
	double v = 70 + 30 * noise(&seed);
	return k % 17 == 3 ? 0 : v;
}

static double spin_starved_2(int k)
{
	return spin_starved(k + 1000);
}

/* One minute of threads ths: whether the busy floor holds, and the alert
 * text into buf. */
static bool floor_case(const struct synth *ths, int n, char *buf, size_t size, struct metrics *m)
{
	init(m, 60);
	run_synth(m, ths, n, 60);
	view_chart_alerts_text(m, buf, size);
	return m->alert_busy_floor;
}

/* Issue 24 item 7: a floor is what stays busy in the pauses between
 * bursts; a steady worker with no pauses is high CPU, not a floor. */
static void test_busy_floor(void **state)
{
	struct metrics m;
	char buf[256];

	/* Bursts to 100% over a 20% poller: the floor is 20%, the poller's. */
	const struct synth over[] = {{100, "main", worker_1s_1s, false, 0},
				     {101, "poller", NULL, false, 20}};
	assert_true(floor_case(over, 2, buf, sizeof(buf), &m));
	assert_float_equal(m.alert_floor, 20, 1e-9);
	assert_false(metrics_thread(&m, 100, false)->busy_floor);
	assert_true(metrics_thread(&m, 101, false)->busy_floor);
	/* No rhythm: a 2 s period is under the 3 s a rhythm needs. */
	assert_string_equal(buf, "! BUSY FLOOR in the pauses between bursts: poller (101) 20%");
	metrics_free(&m);

	/* A flat 100% spinner has no pauses: no alert. */
	const struct synth flat[] = {{100, "spin", spin_100, true, 0}};
	assert_false(floor_case(flat, 1, buf, sizeof(buf), &m));
	assert_string_equal(buf, "");
	metrics_free(&m);

	/* Two identical spinners starved at random by other load (the CPU
	 * line jumps between 80% and 200%, some steps to 0 for one): no
	 * pauses, no alert, whatever p10 and p90 say. */
	const struct synth two[] = {{100, "cpuburn", spin_starved, true, 0},
				    {101, "cpuburn", spin_starved_2, true, 0}};
	assert_false(floor_case(two, 2, buf, sizeof(buf), &m));
	assert_true(m.cpu_p90 >= m.cpu_floor + 10);
	assert_false(metrics_thread(&m, 100, false)->busy_floor);
	assert_false(metrics_thread(&m, 101, false)->busy_floor);
	assert_string_equal(buf, "");
	metrics_free(&m);

	/* Bursts that return to zero: pauses at 0, no floor, no alert. */
	const struct synth zero[] = {{100, "main", worker_1s_1s, false, 0}};
	assert_false(floor_case(zero, 1, buf, sizeof(buf), &m));
	assert_float_equal(m.alert_floor, 0, 1e-9);
	metrics_free(&m);

	/* Two pollers under the bursts: both hold the floor, both named with
	 * their floor column's figure, highest first. */
	const struct synth both[] = {{100, "main", worker_1s_1s, false, 0},
				     {101, "poller", NULL, false, 20},
				     {102, "poller-2", NULL, false, 30}};
	assert_true(floor_case(both, 3, buf, sizeof(buf), &m));
	assert_float_equal(m.alert_floor, 50, 1e-9);
	assert_true(metrics_thread(&m, 101, false)->busy_floor);
	assert_true(metrics_thread(&m, 102, false)->busy_floor);
	assert_string_equal(
	    buf, "! BUSY FLOOR in the pauses between bursts: poller-2 (102) 30%, poller (101) 20%");
	metrics_free(&m);
}

static void test_spike_timing(void **state)
{
	struct metrics m;
	char buf[256];

	init(&m, 300);
	for (int i = 0; i < 60; i++)
		push_cpu(&m, i, 100);
	assert_true(m.baseline_set);
	/* 2.5x baseline from t=60: the alert holds from t=90 (30 s). */
	for (int i = 60; i < 90; i++) {
		push_cpu(&m, i, 250);
		assert_false(m.alert_spike);
	}
	push_cpu(&m, 90, 250);
	assert_true(m.alert_spike);
	assert_float_equal(m.spike_held_s, 30, 1e-9);
	view_chart_alerts_text(&m, buf, sizeof(buf));
	/* A steady 250% has no pauses: the spike alone, no busy floor. */
	assert_string_equal(buf, "! CPU 2.5x baseline for 30s");
	/* Exactly 2x is not above 2x; and the run restarts. */
	push_cpu(&m, 91, 200);
	assert_false(m.alert_spike);
	for (int i = 92; i < 100; i++)
		push_cpu(&m, i, 250);
	assert_false(m.alert_spike);
	metrics_free(&m);
}

/* The number in "+6.0 MiB/min" as bytes per second. */
static double parse_rate(const char *s)
{
	double v;
	char unit[8], per[8];
	const char *p = strchr(s, '+');
	assert_non_null(p);
	assert_int_equal(sscanf(p, "+%lf %3s/%3[a-z]", &v, unit, per), 3);
	double mul = !strcmp(unit, "GiB") ? GIB : !strcmp(unit, "MiB") ? MIB : 1024.0;
	double div = !strcmp(per, "h") ? 3600 : 60;
	return v * mul / div;
}

static void test_stairs(void **state)
{
	struct metrics m;
	char buf[256];
	unsigned seed = 7;

	/* 100 MiB growing 2 MiB every 20 s (0.1 MiB/s = 6 MiB/min) with
	 * allocator noise, over 10 minutes. */
	init(&m, 600);
	for (int i = 0; i < 600; i++) {
		double anon = 100.0 * MIB + (i / 20) * 2.0 * MIB + noise(&seed) * 0.2 * MIB;
		metrics_push_process(&m, i, 50, (uint64_t)anon, 20 * MIB, 1 * MIB);
	}
	m.mem_limit = 1 * GIB;
	m.mem_limit_src = "cgroup";
	metrics_eval(&m, 599);
	assert_int_equal(m.mem_trend.kind, SERIES_STAIRS);
	assert_true(m.alert_stairs);
	assert_string_equal(m.mem_growing, "anonymous");
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "  STAIRS, leak suspected: +"));
	assert_non_null(strstr(buf, ", no drops in 10m  (anon"));
	double truth = 0.1 * MIB;
	assert_true(fabs(parse_rate(buf) - truth) < 0.2 * truth);
	/* Time to 1 GiB from ~180 MiB at 0.1 MiB/s: ~8400 s = 2h20m. */
	double expect = (1024.0 * MIB - (double)m.mem_now) / truth;
	assert_true(fabs(m.mem_to_limit_s - expect) < 0.2 * expect);
	view_chart_mem_limit_text(&m, buf, sizeof(buf));
	assert_true(!strncmp(buf, "limit 1.0 GiB (cgroup) reached in ~2h", 37));
	assert_non_null(strstr(buf, "at this slope; anonymous memory grows"));
	view_chart_alerts_text(&m, buf, sizeof(buf));
	assert_true(!strncmp(buf, "! MEM STAIRS +", 14));
	assert_non_null(strstr(buf, ", limit in ~2h"));
	assert_non_null(strstr(buf, " (anonymous)"));
	/* Who holds it by name, one rate and one unit on the line; at 80
	 * columns each part whole or left out, the limit before the rest
	 * (issue 24: "limit in ~3h21m: cache_put.constprop.0 (lea"). */
	m.mem_holder = "cache_put.constprop.0";
	view_chart_alerts_text(&m, buf, sizeof(buf));
	assert_non_null(strstr(buf, "m: held by cache_put.constprop.0 (anonymous)"));
	assert_non_null(strstr(buf, "/min"));
	assert_null(strstr(strstr(buf, "/min") + 4, "/min"));
	view_chart_alerts_fit(&m, 60, buf, sizeof(buf));
	assert_true(strlen(buf) <= 60);
	assert_non_null(strstr(buf, ", limit in ~2h"));
	assert_null(strstr(buf, "held by")); /* it does not fit whole: out */
	assert_non_null(strstr(buf, " (anonymous)"));
	view_chart_alerts_fit(&m, 40, buf, sizeof(buf));
	assert_true(!strncmp(buf, "! MEM STAIRS +", 14));
	assert_null(strstr(buf, "held by"));
	/* The MEM line: the breakdown whole or not at all ("(anon 104"). */
	view_chart_mem_fit(&m, false, 80, buf, sizeof(buf));
	assert_true(strlen(buf) <= 80);
	assert_null(strstr(buf, "(anon"));
	assert_non_null(strstr(buf, "STAIRS, leak suspected: +"));
	/* A JVM (runtime/hsperf): its heap beside the RSS, and where the
	 * growth is: on the heap when the committed heap took half of it. */
	uint64_t rss = m.mem_now;
	m.rt_heap = true;
	m.rt_heap_used = 14 * MIB;
	m.rt_heap_committed = 32 * MIB;
	m.rt_heap_committed0 = 32 * MIB;
	m.rt_rss0 = rss - 40 * MIB;
	view_chart_heap_text(&m, buf, sizeof(buf));
	char want[160], r[32], o[32];
	text_bytes(rss, r, sizeof(r));
	text_bytes(rss - 32 * MIB, o, sizeof(o));
	snprintf(want, sizeof(want), "Java heap 14 MiB of 32 MiB, RSS %s: %s outside the heap", r,
		 o);
	assert_string_equal(buf, want);
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_true(!strncmp(buf, "MEM Java heap 14 MiB of 32 MiB, RSS ", 36));
	assert_non_null(strstr(buf, "; growth outside the Java heap"));
	m.rt_heap_committed = 60 * MIB; /* the heap took 28 of the 40 MiB */
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "; growth on the Java heap"));
	m.rt_name = "Go"; /* runtime/goheap: the same line, its name */
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_true(!strncmp(buf, "MEM Go heap 14 MiB of 60 MiB, RSS ", 34));
	assert_non_null(strstr(buf, "; growth on the Go heap"));
	m.rt_heap = false;
	view_chart_heap_text(&m, buf, sizeof(buf));
	assert_string_equal(buf, "");
	metrics_free(&m);
}

static void test_rollercoaster_flat(void **state)
{
	struct metrics m;
	char buf[256];

	/* Rises 4 MiB/s from 300 MiB for 60 s, then frees: a sawtooth. */
	init(&m, 600);
	for (int i = 0; i < 600; i++) {
		uint64_t anon = 300 * MIB + (uint64_t)(i % 120 < 60 ? i % 120 : 0) * 4 * MIB;
		metrics_push_process(&m, i, 50, anon, 20 * MIB, 0);
	}
	m.mem_limit = 1 * GIB;
	m.mem_limit_src = "cgroup";
	metrics_eval(&m, 599);
	assert_int_equal(m.mem_trend.kind, SERIES_ROLLERCOASTER);
	assert_false(m.alert_stairs);
	assert_true(m.mem_to_limit_s < 0);
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_non_null(
	    strstr(buf, "  ROLLERCOASTER, healthy: peaks 556 MiB, drops every ~2m  (anon"));
	view_chart_mem_limit_text(&m, buf, sizeof(buf));
	assert_string_equal(buf, "limit 1.0 GiB (cgroup)"); /* not rising: no time to it */
	metrics_free(&m);

	/* Flat with noise, and one big allocation: flat, no alert. */
	init(&m, 300);
	unsigned seed = 3;
	for (int i = 0; i < 300; i++) {
		double anon = 500.0 * MIB + noise(&seed) * 0.3 * MIB + (i >= 150 ? 200.0 * MIB : 0);
		metrics_push_process(&m, i, 50, (uint64_t)anon, 0, 0);
	}
	m.mem_limit = 1 * GIB;
	metrics_eval(&m, 299);
	assert_int_equal(m.mem_trend.kind, SERIES_FLAT);
	assert_false(m.alert_stairs);
	assert_true(m.mem_to_limit_s < 0);
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "  FLAT: no trend"));
	metrics_free(&m);

	/* Too little data for any verdict. */
	init(&m, 60);
	for (int i = 0; i < 5; i++)
		metrics_push_process(&m, i, 50, (uint64_t)(i + 1) * 100 * MIB, 0, 0);
	metrics_eval(&m, 4);
	assert_false(m.alert_stairs);
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "  collecting (5s of memory data, a verdict after 10s)"));
	metrics_free(&m);
}

/* A main thread that works 1 s and sleeps 1 s beside a poller: at an
 * unlucky phase every one-second bucket holds half a second of work and
 * the process reads flat (issue 17 item 5: the alert came in one run and
 * never in another). The ~100 ms steps decide: bursty is bursty, and the
 * main thread, idle for whole seconds, holds no floor. */
static double main_half_phase(int k)
{
	return (k + 5) / 10 % 2 ? 100 : 0; /* 1 s on, 1 s off, half a second out of phase */
}

static void test_busy_floor_aliased(void **state)
{
	struct metrics m;
	char buf[256];
	const struct synth ths[] = {{100, "main", main_half_phase, false, 0},
				    {101, "poller", NULL, false, 30}};

	init(&m, 60);
	run_synth(&m, ths, 2, 30);
	/* The one-second buckets alone say flat 80%. */
	assert_float_equal(m.cpu_floor, 80, 1e-9);
	assert_float_equal(m.cpu_p90, 80, 1e-9);
	assert_true(m.alert_busy_floor);
	assert_float_equal(m.alert_floor, 30, 1e-9);
	assert_false(metrics_thread(&m, 100, false)->busy_floor);
	assert_true(metrics_thread(&m, 101, false)->busy_floor);
	view_chart_alerts_text(&m, buf, sizeof(buf));
	assert_string_equal(buf, "! BUSY FLOOR in the pauses between bursts: poller (101) 30%");
	metrics_free(&m);
}

static double server_2s_2s(int k)
{
	return k / 20 % 2 ? 0 : 100;
}

static void test_thread_busy_floor(void **state)
{
	struct metrics m;
	char buf[256];
	/* server works half the time, "poller" spins, "idler" sleeps. */
	const struct synth ths[] = {{100, "server", server_2s_2s, false, 0},
				    {101, "poller", NULL, false, 97},
				    {102, "idler", NULL, false, 0}};

	init(&m, 60);
	run_synth(&m, ths, 3, 60);
	assert_true(m.alert_busy_floor);
	assert_int_equal(m.nthreads, 3);
	assert_false(metrics_thread(&m, 100, false)->busy_floor);
	assert_true(metrics_thread(&m, 101, false)->busy_floor);
	assert_false(metrics_thread(&m, 102, false)->busy_floor);
	assert_float_equal(metrics_thread(&m, 101, false)->floor_pct, 97, 1e-9);
	assert_int_equal(m.busiest_floor_tid, 101);
	view_chart_alerts_text(&m, buf, sizeof(buf));
	/* The server's 2 s of work every 4 s is a rhythm too, after it. */
	assert_string_equal(buf, "! BUSY FLOOR in the pauses between bursts: poller (101) 97%   "
				 "! CPU spikes every 4 s (+-1 s), 2 s each, to 197% from 97%");
	metrics_free(&m);
}

/* A bursty thread whose quiet stretches are never quite 0 in its seconds
 * (a few steps of 6-8%: its one-second p10 is above 5%) but which sleeps
 * through most steps of them: it bursts, it holds no floor; the poller
 * does. */
static double server_noisy(int k)
{
	static const double pattern[10] = {6, 100, 60, 7, 100, 40, 6, 100, 100, 8};
	double v = pattern[k / 10 % 10];
	/* The quiet seconds: one step of that, the others asleep. */
	return v < 10 ? (k % 10 == 0 ? v * 10 : 0) : v;
}

static void test_thread_busy_floor_bursty(void **state)
{
	struct metrics m;
	const struct synth ths[] = {{100, "server", server_noisy, false, 0},
				    {101, "poller", NULL, false, 30}};

	init(&m, 60);
	run_synth(&m, ths, 2, 60);
	assert_true(m.alert_busy_floor);
	assert_true(metrics_thread(&m, 100, false)->floor_pct > 5);
	assert_false(metrics_thread(&m, 100, false)->busy_floor);
	assert_true(metrics_thread(&m, 101, false)->busy_floor);
	assert_int_equal(m.busiest_floor_tid, 101);
	metrics_free(&m);
}

static void test_thread_states(void **state)
{
	struct metrics m;
	struct metrics_thread *th;

	init(&m, 20);
	for (int i = 0; i <= 10; i++) {
		metrics_push_thread(&m, i, 200, "loader", i < 3 ? 'S' : 'D', 0);
		metrics_push_thread(&m, i, 201, "reaped", 'Z', 0);
		if (i < 4)
			metrics_push_thread(&m, i, 202, "brief", 'R', 50);
		metrics_push_process(&m, i, 50, MIB, 0, 0);
		metrics_eval(&m, i);
		th = metrics_thread(&m, 200, false);
		/* In D since t=3: STUCK from t=8 (5 s). */
		assert_int_equal(th->stuck, i >= 8);
		if (i >= 3)
			assert_float_equal(th->d_for_s, i - 3, 1e-9);
	}
	assert_true(metrics_thread(&m, 201, false)->zombie);
	assert_false(metrics_thread(&m, 200, false)->zombie);
	/* "brief" was last seen at t=3: gone, but kept for the window. */
	th = metrics_thread(&m, 202, false);
	assert_non_null(th);
	assert_false(th->alive);
	assert_true(metrics_thread(&m, 200, false)->alive);
	/* Leaving D clears STUCK. */
	metrics_push_thread(&m, 11, 200, "loader", 'S', 0);
	metrics_push_process(&m, 11, 50, MIB, 0, 0);
	metrics_eval(&m, 11);
	assert_false(metrics_thread(&m, 200, false)->stuck);
	assert_float_equal(metrics_thread(&m, 200, false)->d_since, -1, 1e-9);
	/* A window after it was last seen, the gone thread is dropped. */
	for (int i = 12; i <= 31; i++) {
		metrics_push_thread(&m, i, 200, "loader", 'S', 0);
		metrics_push_process(&m, i, 50, MIB, 0, 0);
		metrics_eval(&m, i);
	}
	assert_null(metrics_thread(&m, 202, false));
	assert_non_null(metrics_thread(&m, 200, false));
	assert_int_equal(m.nthreads, 1); /* the zombie thread is gone too */
	metrics_free(&m);
}

static void test_texts(void **state)
{
	char buf[64];

	view_chart_span_text(45, buf, sizeof(buf));
	assert_string_equal(buf, "45s");
	view_chart_span_text(14 * 60 + 10, buf, sizeof(buf));
	assert_string_equal(buf, "14m");
	view_chart_span_text(3 * 3600 + 10 * 60, buf, sizeof(buf));
	assert_string_equal(buf, "3h10m");
	view_chart_span_text(3 * 86400 + 5 * 3600, buf, sizeof(buf));
	assert_string_equal(buf, "3d05h");
	view_chart_rate_text(96.0 * MIB / 3600, buf, sizeof(buf));
	assert_string_equal(buf, "+1.6 MiB/min");
	view_chart_rate_text(-1.5 * GIB / 3600, buf, sizeof(buf));
	assert_string_equal(buf, "-26 MiB/min");
	view_chart_rate_text(10.0 * MIB, buf, sizeof(buf));
	assert_string_equal(buf, "+600 MiB/min");
	assert_string_equal(view_threads_state_word('D'), "disk");
	assert_string_equal(view_threads_state_word('Z'), "zombie");
	assert_string_equal(view_threads_state_word('?'), "unknown");
}

/* Several processes, one of them growing: the MEM line, the alert and the
 * reading name it ("worker 4502"), escaped; two growing alike: nobody. */
static void test_mem_grower(void **state)
{
	struct metrics m;
	char buf[256];
	unsigned seed = 11;

	init(&m, 300);
	for (int i = 0; i < 300; i++) {
		double web = 200.0 * MIB + noise(&seed) * 0.2 * MIB;
		double worker = 50.0 * MIB + (i / 15) * 3.0 * MIB;
		metrics_push_proc_rss(&m, i, 4400, "web", (uint64_t)web);
		metrics_push_proc_rss(&m, i, 4502, "work\x1b[2Jer", (uint64_t)worker);
		metrics_push_process(&m, i, 50, (uint64_t)(web + worker), 0, 0);
	}
	metrics_eval(&m, 299);
	assert_int_equal(m.nprocs, 2);
	assert_int_equal(m.mem_trend.kind, SERIES_STAIRS);
	assert_int_equal(m.mem_grower_pid, 4502);
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_non_null(strstr(buf, "STAIRS, leak suspected: +"));
	assert_non_null(strstr(buf, "/min (work?[2Jer 4502), no drops in 5m"));
	view_chart_alerts_text(&m, buf, sizeof(buf));
	assert_non_null(strstr(buf, "! MEM STAIRS +"));
	assert_non_null(strstr(buf, "(anonymous, work?[2Jer 4502)"));
	/* Narrowed to a thread, the lines say they cover every process. */
	m.multi = true;
	view_chart_mem_text(&m, true, buf, sizeof(buf));
	assert_true(!strncmp(buf, "MEM (all processes) ", 20));
	view_chart_cpu_text(&m, true, buf, sizeof(buf));
	assert_true(!strncmp(buf, "CPU (all processes) now ", 24));
	metrics_free(&m);

	/* Both grow at the same pace: no one process to name. */
	init(&m, 300);
	for (int i = 0; i < 300; i++) {
		double each = 50.0 * MIB + (i / 15) * 3.0 * MIB;
		metrics_push_proc_rss(&m, i, 4400, "a", (uint64_t)each);
		metrics_push_proc_rss(&m, i, 4502, "b", (uint64_t)each);
		metrics_push_process(&m, i, 50, (uint64_t)(2 * each), 0, 0);
	}
	metrics_eval(&m, 299);
	assert_int_equal(m.mem_trend.kind, SERIES_STAIRS);
	assert_int_equal(m.mem_grower_pid, 0);
	view_chart_mem_text(&m, false, buf, sizeof(buf));
	assert_null(strstr(buf, "4502"));
	metrics_free(&m);

	/* One process: never named (the MEM line is already its own). */
	init(&m, 300);
	for (int i = 0; i < 300; i++) {
		double each = 50.0 * MIB + (i / 15) * 3.0 * MIB;
		metrics_push_proc_rss(&m, i, 4502, "b", (uint64_t)each);
		metrics_push_process(&m, i, 50, (uint64_t)each, 0, 0);
	}
	metrics_eval(&m, 299);
	assert_int_equal(m.mem_grower_pid, 0);
	metrics_free(&m);
}

/* The set of processes: new ones join in order, a pid listed twice once,
 * the ones not listed leave (closing what they kept open). */
static void test_set_pids(void **state)
{
	struct metrics m;
	pid_t a[] = {30, 10, 20, 10}, b[] = {20, 40};

	init(&m, 60);
	assert_int_equal(m.nprocs, 0);
	assert_int_equal(metrics_set_pids(&m, a, 4), 0);
	assert_int_equal(m.nprocs, 3);
	assert_int_equal(m.procs[0].pid, 10);
	assert_int_equal(m.procs[1].pid, 20);
	assert_int_equal(m.procs[2].pid, 30);
	assert_int_equal(metrics_set_pids(&m, b, 2), 0);
	assert_int_equal(m.nprocs, 2);
	assert_int_equal(m.procs[0].pid, 20); /* kept its place */
	assert_int_equal(m.procs[1].pid, 40);
	assert_non_null(metrics_proc(&m, 40));
	assert_null(metrics_proc(&m, 10));
	assert_int_equal(metrics_set_pids(&m, NULL, 0), 0);
	assert_int_equal(m.nprocs, 0);
	metrics_free(&m);
}

/* ---- live ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int wake_pipe[2];
static volatile pid_t worker_tid;

static void *worker(void *arg)
{
	char c;
	worker_tid = (pid_t)syscall(SYS_gettid);
	if (read(wake_pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/* s seconds of this thread's CPU (not of the wall clock: on a loaded box
 * a wall-clock burn may get little CPU, and the tick would rightly show
 * little). */
static void burn(double s)
{
	volatile double x = 0;
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + s;
	do {
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
}

static void test_live_self(void **state)
{
	struct metrics m;
	struct metrics_config c;
	pthread_t th;

	metrics_config_default(&c);
	assert_int_equal(metrics_init(&m, getpid(), &c), 0);
	assert_int_equal(metrics_tick(&m, now_s()), 0);
	assert_int_equal(m.cpu.len, 0); /* the first tick only records */
	assert_true(m.mem_limit > 0);
	assert_non_null(m.mem_limit_src);

	/* What the tick should report is our own CPU over the wall time in
	 * between, whatever else the machine is doing. */
	struct timespec c0, c1;
	double w0 = m.last_t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	burn(0.3);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double t1 = now_s();
	assert_int_equal(metrics_tick(&m, t1), 0);
	double expect =
	    100.0 * ((c1.tv_sec - c0.tv_sec) + (c1.tv_nsec - c0.tv_nsec) / 1e9) / (t1 - w0);
	assert_int_equal(m.cpu.len, 1);
	print_message("cpu_now %.1f%%, expected %.1f%%\n", m.cpu_now, expect);
	assert_true(m.cpu_now > expect / 2); /* the burn seen, however loaded the box */
	assert_true(fabs(m.cpu_now - expect) < 15);
	assert_true(m.mem_now > 0 && m.anon_now > 0);
	struct metrics_thread *me = metrics_thread(&m, getpid(), false);
	assert_non_null(me);
	assert_true(fabs(me->cpu_pct - expect) < 15);

	/* A thread created now appears with its name, sleeping in a read. */
	assert_int_equal(pipe(wake_pipe), 0);
	assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
	pthread_setname_np(th, "mt-worker");
	while (!worker_tid)
		usleep(1000);
	/* A zombie child, not reaped yet. */
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	usleep(200000);
	assert_int_equal(metrics_tick(&m, now_s()), 0);
	assert_true(m.cpu_now < 50);
	struct metrics_thread *w = metrics_thread(&m, worker_tid, false);
	assert_non_null(w);
	assert_string_equal(w->comm, "mt-worker");
	assert_int_equal(w->state, 'S');
	assert_true(w->alive);
	assert_true(w->cpu_pct < 20);
	assert_int_equal(m.nzombies, 1);
	assert_int_equal(m.zombies[0], child);
	assert_int_equal(waitpid(child, NULL, 0), child);

	/* The files stay open from one tick to the next, and the reaped
	 * child is gone from the same children file. */
	int stat_fd = m.procs[0].stat_f.fd, status_fd = m.procs[0].status_f.fd;
	me = metrics_thread(&m, getpid(), false);
	int me_fd = me->stat_f.fd, kids_fd = me->children_f.fd;
	assert_true(stat_fd >= 0 && status_fd >= 0 && me_fd >= 0 && kids_fd >= 0);
	assert_int_equal(metrics_tick(&m, now_s() + 0.005), 0);
	me = metrics_thread(&m, getpid(), false);
	assert_int_equal(m.procs[0].stat_f.fd, stat_fd);
	assert_int_equal(m.procs[0].status_f.fd, status_fd);
	assert_int_equal(me->stat_f.fd, me_fd);
	assert_int_equal(me->children_f.fd, kids_fd);
	assert_int_equal(m.nzombies, 0);

	/* It exits: gone at the next tick, still listed. */
	assert_int_equal(write(wake_pipe[1], "x", 1), 1);
	pthread_join(th, NULL);
	assert_int_equal(metrics_tick(&m, now_s() + 0.01), 0);
	w = metrics_thread(&m, worker_tid, false);
	assert_non_null(w);
	assert_false(w->alive);
	assert_int_equal(m.nzombies, 0);
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	metrics_free(&m);
	/* metrics_free closed every file it kept. */
	assert_int_equal(fcntl(stat_fd, F_GETFD), -1);
	assert_int_equal(fcntl(me_fd, F_GETFD), -1);

	/* A process that does not exist. */
	assert_int_equal(metrics_init(&m, 0x3ffffff0, &c), 0);
	assert_int_equal(metrics_tick(&m, now_s()), -ESRCH);
	metrics_free(&m);
}

/* A child that burns CPU until killed (or we die), after touching mib MiB;
 * returns once the memory is touched. */
static pid_t spawn_burner(int mib)
{
	int ready[2];
	char c = 0;
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		static char *volatile keep; /* so the memset is not optimised away */
		keep = mib ? malloc((size_t)mib * MIB) : NULL;
		if (keep)
			memset(keep, 1, (size_t)mib * MIB);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			burn(1);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/* CPU seconds of process pid so far, from its CPU clock (not procfs). */
static double cpu_clock_s(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;
	assert_int_equal(clock_getcpuclockid(pid, &cid), 0);
	assert_int_equal(clock_gettime(cid, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Two real processes: CPU and RSS are their sums, their threads carry their
 * pids; the one that exits stops counting at once; one that joins later
 * counts from its first second. */
static void test_live_procs(void **state)
{
	struct metrics m;
	struct metrics_config c;
	pid_t a = spawn_burner(0), b = spawn_burner(24), both[2] = {a, b};

	metrics_config_default(&c);
	assert_int_equal(metrics_init(&m, a, &c), 0);
	assert_int_equal(metrics_set_pids(&m, both, 2), 0);
	double t0 = now_s(), ca0 = cpu_clock_s(a), cb0 = cpu_clock_s(b);
	assert_int_equal(metrics_tick(&m, t0), 0);
	usleep(600000);
	double t1 = now_s(), ca1 = cpu_clock_s(a), cb1 = cpu_clock_s(b);
	assert_int_equal(metrics_tick(&m, t1), 0);
	double pa = 100 * (ca1 - ca0) / (t1 - t0), pb = 100 * (cb1 - cb0) / (t1 - t0);
	print_message("sum %.1f%%, a %.1f%% + b %.1f%%\n", m.cpu_now, pa, pb);
	/* procfs counts in 10 ms ticks: 2 per process over 0.6 s is ~3.4%. */
	assert_true(fabs(m.cpu_now - (pa + pb)) < 8);
	assert_true(m.cpu_now > fmax(pa, pb) + 5);
	uint64_t rss = 0;
	for (int i = 0; i < m.nprocs; i++) {
		assert_true(m.procs[i].alive);
		rss += m.procs[i].anon + m.procs[i].file + m.procs[i].shmem;
	}
	assert_int_equal(m.mem_now, rss);
	assert_true(m.mem_now > 24 * MIB);
	assert_true(m.multi);
	assert_int_equal(metrics_thread(&m, a, false)->pid, a);
	assert_int_equal(metrics_thread(&m, b, false)->pid, b);

	/* b exits: from the next tick only a counts, and not b's memory. */
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	t0 = t1;
	ca0 = ca1;
	usleep(400000);
	t1 = now_s();
	ca1 = cpu_clock_s(a);
	assert_int_equal(metrics_tick(&m, t1), 0);
	pa = 100 * (ca1 - ca0) / (t1 - t0);
	print_message("after b exited %.1f%%, a %.1f%%\n", m.cpu_now, pa);
	assert_true(fabs(m.cpu_now - pa) < 8);
	assert_false(metrics_proc(&m, b)->alive);
	assert_true(m.mem_now < 24 * MIB);
	assert_false(metrics_thread(&m, b, false)->alive);

	/* c joins after the first tick: its whole CPU is this second's. */
	pid_t c2 = spawn_burner(0), set[2] = {a, c2};
	assert_int_equal(metrics_set_pids(&m, set, 2), 0);
	assert_null(metrics_proc(&m, b));
	t0 = t1;
	ca0 = ca1;
	usleep(400000);
	t1 = now_s();
	ca1 = cpu_clock_s(a);
	double cc = cpu_clock_s(c2);
	assert_int_equal(metrics_tick(&m, t1), 0);
	double expect = 100 * (ca1 - ca0 + cc) / (t1 - t0);
	print_message("with c %.1f%%, expected %.1f%%\n", m.cpu_now, expect);
	assert_true(fabs(m.cpu_now - expect) < 8);
	assert_int_equal(metrics_thread(&m, c2, false)->pid, c2);

	/* Every process gone: -ESRCH, the series kept. */
	kill(a, SIGKILL);
	kill(c2, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(c2, NULL, 0);
	size_t len = m.cpu.len;
	assert_int_equal(metrics_tick(&m, now_s()), -ESRCH);
	assert_int_equal(m.cpu.len, len);
	metrics_free(&m);
}

/* A process of 800 sleeping threads: after the first tick, a tick reads
 * the files of METRICS_ROTATE threads and of those the samples name, not
 * of all; every thread stays counted and alive, and each is read in turn. */
#define QUIET_THREADS 800

static pid_t sampled_tid;

static uint64_t fake_samples(void *ctx, pid_t tid)
{
	static uint64_t moves;
	return tid == sampled_tid ? ++moves : 0;
}

static void test_quiet_budget(void **state)
{
	struct metrics m;
	pid_t kid = spawn_parked(QUIET_THREADS);

	assert_true(kid > 0);
	assert_int_equal(metrics_init(&m, kid, NULL), 0);
	double t0 = now_s();
	assert_int_equal(metrics_tick(&m, t0), 0);
	assert_int_equal(m.nthreads, QUIET_THREADS);
	assert_true(m.reads >= 2 * QUIET_THREADS); /* the first reads all: stat, children */
	sampled_tid = m.threads[QUIET_THREADS - 1].tid;
	metrics_set_samples(&m, fake_samples, NULL);
	for (int k = 1; k <= 4; k++) {
		uint64_t r0 = m.reads;
		double t = t0 + k;
		/* On a loaded machine a thread may not have reached pause() yet:
		 * one not asleep or with CPU at the last read is read too. */
		int moving = 0;
		for (int i = 0; i < m.nthreads; i++)
			moving += m.threads[i].state != 'S' || m.threads[i].cpu_pct > 0;
		assert_int_equal(metrics_tick(&m, t), 0);
		print_message("tick %d: %llu reads (%d threads moving)\n", k,
			      (unsigned long long)(m.reads - r0), moving);
		/* stat, wchan and children of the rotation, the sampled one and
		 * those moving */
		assert_true(moving < QUIET_THREADS / 4);
		assert_true(m.reads - r0 <= (uint64_t)(3 * (METRICS_ROTATE + 1 + moving)));
		assert_int_equal(m.nthreads, QUIET_THREADS);
		int alive = 0;
		for (int i = 0; i < m.nthreads; i++)
			alive += m.threads[i].alive && m.threads[i].seen_t == t;
		assert_int_equal(alive, QUIET_THREADS);
		assert_true(metrics_thread(&m, sampled_tid, false)->read_t == t);
	}
	/* 4 turns of 256 cover 800: every thread was read since the first. */
	for (int i = 0; i < m.nthreads; i++)
		assert_true(m.threads[i].read_t > t0);
	/* No view shows wait channels: the threads read have none; shown
	 * again, the others' come METRICS_ROTATE a tick. */
	metrics_want_wchan(&m, false);
	for (int k = 5; k <= 8; k++)
		assert_int_equal(metrics_tick(&m, t0 + k), 0);
	int with = 0, sleeping = 0;
	for (int i = 0; i < m.nthreads; i++) {
		with += m.threads[i].wchan[0] != '\0';
		sleeping += m.threads[i].state == 'S';
	}
	assert_int_equal(with, 0);
	assert_true(sleeping > QUIET_THREADS / 2);
	metrics_want_wchan(&m, true);
	for (int k = 9; k <= 10; k++)
		assert_int_equal(metrics_tick(&m, t0 + k), 0);
	for (int i = 0; i < m.nthreads; i++)
		with += m.threads[i].state == 'S' && m.threads[i].wchan[0] != '\0';
	/* two ticks: 2 x 256 read in turn and 2 x 256 caught up, of 800 */
	assert_true(with >= sleeping * 9 / 10);
	kill_reap(kid);
	metrics_free(&m);
}

/* Forks known (per-CPU events see them all): a thread's children file is
 * read when it had children, not by every thread at every tick; its child
 * turning zombie is found at the next tick all the same. */
static void test_forks_known(void **state)
{
	struct metrics m;
	int ready[2], go[2];
	char c;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid_t kid = fork(); /* a process with one thread and one child */
	assert_true(kid >= 0);
	if (kid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pid_t grand = fork();
		if (grand == 0) { /* exits when told: a zombie nobody reaps */
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (grand < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	usleep(100000); /* the parent asleep in pause() */
	assert_int_equal(metrics_init(&m, kid, NULL), 0);
	metrics_set_forks(&m, true, 0);
	double t0 = now_s();
	assert_int_equal(metrics_tick(&m, t0), 0);
	assert_int_equal(m.nzombies, 0);
	struct metrics_thread *th = metrics_thread(&m, kid, false);
	assert_non_null(th);
	assert_true(th->parent);
	/* A tick long after the last fork: stat, wchan, and the parent's
	 * children file. */
	metrics_set_forks(&m, true, 0);
	uint64_t r0 = m.reads;
	assert_int_equal(metrics_tick(&m, t0 + 30), 0);
	assert_int_equal(m.reads - r0, 3);
	assert_int_equal(write(go[1], "x", 1), 1); /* the grandchild exits */
	close(go[1]);
	for (int k = 31; k < 80 && m.nzombies == 0; k++) {
		usleep(20000);
		assert_int_equal(metrics_tick(&m, t0 + k), 0);
	}
	assert_int_equal(m.nzombies, 1);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	metrics_free(&m);

	/* A process without children: no children file after the first tick. */
	pid_t lone = fork();
	assert_true(lone >= 0);
	if (lone == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	usleep(100000);
	assert_int_equal(metrics_init(&m, lone, NULL), 0);
	metrics_set_forks(&m, true, 0);
	assert_int_equal(metrics_tick(&m, t0), 0);
	assert_false(metrics_thread(&m, lone, false)->parent);
	r0 = m.reads;
	assert_int_equal(metrics_tick(&m, t0 + 30), 0);
	assert_int_equal(m.reads - r0, 2); /* stat and wchan */
	kill(lone, SIGKILL);
	waitpid(lone, NULL, 0);
	metrics_free(&m);
}

TEST_MAIN(NULL, NULL, TEST(test_busy_floor_aliased), TEST(test_floor_baseline),
	  TEST(test_busy_floor), TEST(test_thread_busy_floor_bursty), TEST(test_spike_timing),
	  TEST(test_stairs), TEST(test_rollercoaster_flat), TEST(test_thread_busy_floor),
	  TEST(test_thread_states), TEST(test_texts), TEST(test_mem_grower), TEST(test_set_pids),
	  TEST(test_live_self), TEST(test_live_procs), TEST(test_quiet_budget),
	  TEST(test_forks_known))
