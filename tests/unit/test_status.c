/*
 * test_status — the header's numbers from a hand-built struct status_in:
 * pids, the expected sample rate of each sampler kind, the sample total of
 * a saved profile, and the exit notice only once every process is gone;
 * following child processes: the count in the header ("pid 4242 +3
 * children") and the processes not followed past the cap.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/ui/grid.h"
#include "stacktop/app/status.h"

struct fx {
	struct procs ps;
	struct ingest_stats ist;
	struct status_in in;
	int pids[PROCS_MAX];
	struct view_header h;
};

/* Two processes (4242 with 3 threads sampled of 5 seen, 4250), cpu mode. */
static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->ps.n = 2;
	fx->ps.p[0].pid = 4242;
	strcpy(fx->ps.p[0].cmdline, "./server --port 8080");
	fx->ps.p[1].pid = 4250;
	strcpy(fx->ps.p[1].cmdline, "./worker");
	fx->ps.nthreads = 5;
	fx->ps.unsampled = 2;
	fx->ps.unsampled_err = -EMFILE;
	fx->ist = (struct ingest_stats){.samples = 1234, .truncated = 7, .failed = 2};
	fx->in = (struct status_in){
	    .procs = &fx->ps,
	    .sampler = {.samples = 1300, .lost = 11, .rate_hz = 99, .pause_us = 31.5},
	    .sampled_threads = 3,
	    .ingest = &fx->ist,
	    .mode = "cpu",
	    .rate_hz = 99,
	    .window_s = 60,
	    .cpu_now = 250,
	    .window_samples = 900,
	    .span_s = 12.5,
	};
	memset(&fx->h, 0x5a, sizeof(fx->h)); /* status_header clears it */
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void test_counters(void **state)
{
	struct fx *fx = *state;
	struct view_header *h = &fx->h;

	status_header(&fx->in, fx->pids, h);
	assert_int_equal(h->pid, 4242);
	assert_int_equal(h->npids, 2);
	assert_ptr_equal(h->pids, fx->pids);
	assert_int_equal(h->pids[0], 4242);
	assert_int_equal(h->pids[1], 4250);
	assert_string_equal(h->cmdline, "./server --port 8080");
	assert_string_equal(h->mode, "cpu");
	assert_int_equal(h->nthreads, 5);
	assert_float_equal(h->rate_hz, 99, 1e-9);
	assert_int_equal(h->samples_window, 900);
	assert_int_equal(h->samples_total, 1234); /* what ingest got */
	assert_int_equal(h->lost, 11);
	assert_int_equal(h->unwind_truncated, 7);
	assert_int_equal(h->unwind_failed, 2);
	assert_int_equal(h->window_s, 60);
	assert_float_equal(h->span_s, 12.5, 1e-9);
	assert_float_equal(h->pause_us, 31.5, 1e-9);
	assert_int_equal(h->threads_unsampled, 2);
	assert_int_equal(h->unsampled_err, -EMFILE);
	assert_null(h->source);
	/* What status does not own is cleared. */
	assert_false(h->paused);
	assert_null(h->status);
	assert_int_equal(h->warning, VIEW_WARNING_NONE);
	assert_false(h->exited);
	assert_null(h->exit_text);
}

/* cpu: rate x the cores the process burned. */
static void test_expected_cpu(void **state)
{
	struct fx *fx = *state;

	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 99 * 2.5, 1e-9);
	fx->in.cpu_now = 50;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 49.5, 1e-9);
	fx->in.cpu_now = -1; /* unknown */
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 0, 1e-9);
}

/* wall: every sampled thread at the rate, whatever the CPU. */
static void test_expected_wall(void **state)
{
	struct fx *fx = *state;

	fx->in.mode = "wall";
	fx->in.sampler.per_thread_rate = true;
	fx->in.sampler.rate_hz = 20;
	fx->in.cpu_now = 5;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 60, 1e-9);
	fx->in.cpu_now = -1;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 60, 1e-9);
	/* A source without a rate (a saved profile) expects nothing. */
	fx->in.sampler.rate_hz = 0;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 0, 1e-9);
}

static void test_source(void **state)
{
	struct fx *fx = *state;

	fx->in.source = "profile.pb.gz";
	fx->in.source_samples = 35412;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_string_equal(fx->h.source, "profile.pb.gz");
	assert_int_equal(fx->h.samples_total, 35412);
}

static void test_exit_text(void **state)
{
	struct fx *fx = *state;

	/* One of two gone: its text is kept, but not shown yet. */
	fx->ps.p[0].gone = true;
	strcpy(fx->ps.exit_text, "target 4242 exited");
	status_header(&fx->in, fx->pids, &fx->h);
	assert_false(fx->h.exited);
	assert_null(fx->h.exit_text);
	assert_true(fx->h.expected_hz > 0);
	/* Both gone. */
	fx->ps.p[1].gone = true;
	fx->ps.exited = true;
	strcpy(fx->ps.exit_text, "target 4250 exited");
	status_header(&fx->in, fx->pids, &fx->h);
	assert_true(fx->h.exited);
	assert_string_equal(fx->h.exit_text, "target 4250 exited");
	assert_float_equal(fx->h.expected_hz, 0, 1e-9);
	fx->in.sampler.per_thread_rate = true;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.expected_hz, 0, 1e-9);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* The first header line with the word about children. */
static void header_rows(const struct view_header *h, char *l1, char *l2, size_t size)
{
	struct grid g;

	assert_int_equal(grid_init(&g, 200, 12), 0);
	view_header_render(&g, 0, h);
	grid_row_text(&g, 0, l1, size);
	grid_row_text(&g, 1, l2, size);
	grid_free(&g);
}

static void test_following(void **state)
{
	struct fx *fx = *state;
	struct procs_child kids[3] = {{.pid = 5001}, {.pid = 5002}, {.pid = 5003}};
	char l1[1024], l2[1024];

	fx->ps.n = 1;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_false(fx->h.following);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_non_null(strstr(l1, "pid 4242  ./server"));

	fx->ps.follow = true;
	status_header(&fx->in, fx->pids, &fx->h);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_non_null(strstr(l1, "pid 4242 +0 children  ./server"));

	fx->ps.kids = kids;
	fx->ps.nkids = 1;
	status_header(&fx->in, fx->pids, &fx->h);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_non_null(strstr(l1, "pid 4242 +1 child  ./server"));

	fx->ps.nkids = 3;
	fx->ps.unfollowed = 2;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_true(fx->h.following);
	assert_int_equal(fx->h.nchildren, 3);
	assert_int_equal(fx->h.children_unfollowed, 2);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_non_null(strstr(l1, "pid 4242 +3 children  ./server"));
	assert_non_null(strstr(l2, "2 processes not followed (over 4096)"));
	fx->ps.kids = NULL; /* not ours to free */
	fx->ps.nkids = 0;
}

/* health's numbers go to the header as they are; without health (a saved
 * profile) the header has no rate and no warning. */
/* Line 3's word on JIT names: the remedy that fits the runtime seen
 * (never node's flag for a JVM), and a JVM asked for its map. */
static void jit_line(const struct view_header *h, char *l3, size_t size)
{
	struct grid g;

	assert_int_equal(grid_init(&g, 200, 12), 0);
	assert_int_equal(view_header_render(&g, 0, h), 3);
	grid_row_text(&g, 2, l3, size);
	grid_free(&g);
}

static void test_jit_hint(void **state)
{
	/* The map-less pid and the JIT state of a header; what its line says,
	 * and also (NULL: nothing more), and what it must not say. */
	static const struct {
		int nomap;
		struct view_jit jit;
		const char *want, *also, *never;
	} cases[] = {
	    {7,
	     {.runtime = VIEW_JIT_JVM, .pid = 4242},
	     "no /tmp/perf-7.map (JVM: jcmd 4242 Compiler.perfmap",
	     NULL,
	     "perf-basic-prof"},
	    {7,
	     {.runtime = VIEW_JIT_NODE, .pid = 4242},
	     "(node: run with --perf-basic-prof)",
	     NULL,
	     NULL},
	    {7, {.runtime = VIEW_JIT_PYTHON, .py_minor = 12}, "-X perf", NULL, NULL},
	    {7,
	     {.runtime = VIEW_JIT_UNKNOWN, .py_minor = 12},
	     "node --perf-basic-prof, Python 3.12+ -X perf, JVM jcmd",
	     NULL,
	     NULL},
	    /* a JVM asked: when, and how much is unnamed since */
	    {0,
	     {.runtime = VIEW_JIT_JVM,
	      .pid = 4242,
	      .attach = VIEW_JVM_DONE,
	      .ago_s = 2.2,
	      .unnamed_pct = 12},
	     "JVM perf map: requested 2 s ago",
	     "stale: 12% unnamed",
	     NULL},
	    {0,
	     {.runtime = VIEW_JIT_JVM, .pid = 4242, .attach = VIEW_JVM_ASKING},
	     "JVM perf map: asking pid 4242",
	     NULL,
	     NULL},
	    {0,
	     {.runtime = VIEW_JIT_JVM, .pid = 4242, .attach = VIEW_JVM_UNSAFE},
	     "-Xrs",
	     "jcmd 4242 Compiler.perfmap",
	     NULL},
	};
	struct view_header h = {.pid = 4242, .npids = 1, .cmdline = "java", .mode = "cpu"};
	char l3[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h.jit_nomap_pid = cases[i].nomap;
		h.jit = cases[i].jit;
		jit_line(&h, l3, sizeof(l3));
		if (!strstr(l3, cases[i].want) || (cases[i].also && !strstr(l3, cases[i].also)) ||
		    (cases[i].never && strstr(l3, cases[i].never)))
			fail_msg("case %zu (%s): \"%s\"", i, cases[i].want, l3);
	}
}

static void test_health_copied(void **state)
{
	struct fx *fx = *state;
	struct health hl = {.achieved_hz = 120,
			    .warning = VIEW_WARNING_TRACED,
			    .expected_hz = 500,
			    .span_s = 0.5,
			    .lost_recent = 9,
			    .tracer = 4321};

	fx->in.health = &hl;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.achieved_hz, 120, 1e-9);
	assert_float_equal(fx->h.warn_hz, 120, 1e-9);
	assert_int_equal(fx->h.warning, VIEW_WARNING_TRACED);
	assert_float_equal(fx->h.warn_expected_hz, 500, 1e-9);
	assert_float_equal(fx->h.warn_span_s, 0.5, 1e-9);
	assert_int_equal(fx->h.warn_lost, 9);
	assert_int_equal(fx->h.warn_tracer, 4321);
	assert_int_equal(fx->h.pid, 4242); /* the rest as before */
	fx->in.health = NULL;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_int_equal(fx->h.warning, VIEW_WARNING_NONE);
	assert_float_equal(fx->h.achieved_hz, 0, 1e-9);
}

/* The GC share: given once there are 20 CPU samples, shown on line 2 from
 * a few percent ("GC 23% of CPU"), never below. */
static void test_gc_share(void **state)
{
	struct fx *fx = *state;
	char l1[512], l2[512];

	fx->in.gc_samples = 3;
	fx->in.gc_running = 10;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_true(fx->h.gc_pct < 0);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_null(strstr(l2, "GC "));
	fx->in.gc_samples = 23;
	fx->in.gc_running = 100;
	status_header(&fx->in, fx->pids, &fx->h);
	assert_float_equal(fx->h.gc_pct, 23, 1e-9);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_non_null(strstr(l2, "GC 23% of CPU"));
	fx->in.gc_samples = 2;
	status_header(&fx->in, fx->pids, &fx->h);
	header_rows(&fx->h, l1, l2, sizeof(l1));
	assert_null(strstr(l2, "GC "));
}

TEST_MAIN(NULL, NULL, T(test_counters), T(test_jit_hint), T(test_health_copied),
	  T(test_expected_cpu), T(test_expected_wall), T(test_source), T(test_exit_text),
	  T(test_following), T(test_gc_share))
