/* Unit tests for report: round trips through every format report reads
 * (folded, per-thread folded, pprof gzip and plain) keep the shares and the
 * threads; foreign folded details (comments, decimals, [k] marks, huge
 * counts); and each bad input gives its one clear sentence. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/formats/export.h"
#include "stacktop/formats/report.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/formats/pprof.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/model/window.h"
#include "gunzip.h"
#include "window_fixture.h"

static uint32_t fr(struct window *w, uint64_t pc, bool kernel, const char *mod, const char *func,
		   const char *file, int line)
{
	return window_fx_row(w, &(struct window_fx_row){pc, kernel, mod, func, file, line}, 0);
}

/* 60/30/10 over leaf_a/leaf_b/leaf_c like tests/targets/cpuburn, two threads,
 * plus one kernel-leaf stack. */
static struct window *known_window(void)
{
	enum { MN, WK, LA, LB, LC, K };
	static const struct window_fx_row rows[] = {
	    [MN] = {0x1000, false, "cpuburn", "run_worker", "cpuburn.c", 10},
	    [WK] = {0x1010, false, "cpuburn", "work_unit", "cpuburn.c", 20},
	    [LA] = {0x1100, false, "cpuburn", "leaf_a", "cpuburn.c", 30},
	    [LB] = {0x1200, false, "cpuburn", "leaf_b", "cpuburn.c", 40},
	    [LC] = {0x1300, false, "cpuburn", "leaf_c", "cpuburn.c", 50},
	    [K] = {0xffffffff81000000ull, true, "[kernel]", "asm_sysvec_apic_timer_interrupt", NULL,
		   0},
	};
	static const struct window_fx_stack stacks[] = {
	    {5, 200, 400, 3, {MN, WK, LA}},   {5, 201, 200, 3, {MN, WK, LA}},
	    {5, 200, 300, 3, {MN, WK, LB}},   {5, 201, 90, 3, {MN, WK, LC}},
	    {5, 201, 10, 4, {MN, WK, LC, K}},
	};

	return WINDOW_FX_TABLE(rows, 0, stacks);
}

static const char *names(void *ctx, int tid)
{
	return tid == 200 ? "worker-0" : tid == 201 ? "worker 1" : NULL;
}

/* Self share (%) of func in w, all threads, kernel hidden as the default
 * view would not: kernel frames count as their own rows. */
static double share(struct window *w, const char *func, bool hide_kernel, int tid)
{
	struct window_top_query q = {
	    .key = WINDOW_KEY_FUNCTION, .hide_kernel = hide_kernel, .tid = tid};
	struct window_top_row *rows;
	size_t n;
	uint64_t total, self = 0;

	assert_int_equal(window_top(w, &q, &rows, &n, &total), 0);
	for (size_t i = 0; i < n; i++) {
		const struct frame *f = frames_get(window_frames(w), rows[i].frame);
		if (f->sym.func && !strcmp(f->sym.func, func))
			self += rows[i].self;
	}
	free(rows);
	return total ? 100.0 * (double)self / (double)total : -1;
}

/* The sink of a report's sampler: what a sample says, into the window. */
struct feed {
	struct window *w;
	size_t samples;
	uint64_t weight;
};

static void feed_sample(void *ctx, const struct sample *s)
{
	struct feed *fd = ctx;

	assert_non_null(s->frame_ids);
	assert_true(s->nframe_ids > 0);
	assert_int_equal(s->time_ns, REPORT_TIME_NS);
	assert_int_equal(
	    window_add(fd->w, s->time_ns, s->tid, s->frame_ids, (size_t)s->nframe_ids, s->weight),
	    0);
	fd->samples++;
	fd->weight += s->weight;
}

/* Replay the report into w through its sampler, as main does. */
static void feed(struct stackset *r, struct window *w)
{
	struct feed fd = {.w = w};
	struct sampler_sink sink = {.sample = feed_sample, .ctx = &fd};
	struct sampler_stats st;
	struct sampler *s;
	int n;

	assert_int_equal(report_sampler_new(r, &s), 0);
	n = sampler_collect(s, REPORT_TIME_NS, &sink);
	assert_int_equal((size_t)n, fd.samples);
	assert_int_equal(fd.weight, stackset_samples(r));
	sampler_stats(s, &st);
	assert_int_equal(st.samples, stackset_samples(r));
	sampler_free(s);
}

static struct window *load(const char *data, size_t len, struct stackset **r, char *err,
			   size_t errsz, int *rc)
{
	struct window *w;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	*rc = report_load_mem(data, len, "test.prof", window_frames_mut(w), r, err, errsz);
	if (*rc == 0)
		feed(*r, w);
	return w;
}

/* src rendered as o says (*buf, *len) and loaded back into a new window;
 * the test fails with the loader's sentence when it cannot. */
static struct window *render_load(struct window *src, const struct export_opts *o, char **buf,
				  size_t *len, struct stackset **r)
{
	struct window *w;
	char err[256];
	int rc;

	assert_int_equal(export_render(src, o, buf, len, err, sizeof(err)), 0);
	w = load(*buf, *len, r, err, sizeof(err), &rc);
	if (rc)
		fail_msg("report_load_mem: %s", err);
	return w;
}

static void round_trip(const struct export_opts *o, bool expect_threads)
{
	struct window *src = known_window(), *w;
	struct stackset *r = NULL;
	char *buf;
	size_t len;

	w = render_load(src, o, &buf, &len, &r);
	assert_non_null(r);
	assert_int_equal(stackset_samples(r), 1000);
	assert_int_equal(window_total(w), 1000);
	const char *leaves[] = {"leaf_a", "leaf_b", "leaf_c", "asm_sysvec_apic_timer_interrupt"};
	for (size_t i = 0; i < 4; i++) {
		double a = share(src, leaves[i], false, 0), b = share(w, leaves[i], false, 0);
		if (fabs(a - b) > 1.0)
			fail_msg("%s: %.2f%% written, %.2f%% read back", leaves[i], a, b);
		a = share(src, leaves[i], true, 0);
		b = share(w, leaves[i], true, 0);
		if (fabs(a - b) > 1.0)
			fail_msg("%s (kernel hidden): %.2f%% written, %.2f%% read back", leaves[i],
				 a, b);
	}
	/* The kernel frame came back as a kernel frame. */
	bool kernel_seen = false;
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		const struct frame *f = frames_get(window_frames(w), (uint32_t)i);
		if (f->sym.func && !strcmp(f->sym.func, "asm_sysvec_apic_timer_interrupt"))
			kernel_seen = f->kernel && f->sym.kernel;
	}
	assert_true(kernel_seen);
	if (expect_threads) {
		assert_int_equal(window_thread_total(w, 200), 700);
		assert_int_equal(window_thread_total(w, 201), 300);
		assert_string_equal(stackset_thread_name(r, 200), "worker-0");
		assert_string_equal(stackset_thread_name(r, 201), "worker 1");
		assert_true(fabs(share(w, "leaf_a", false, 201) - 66.67) < 0.1);
	} else {
		assert_int_equal(window_thread_total(w, STACKSET_TID_ANY), 1000);
		assert_int_equal(stackset_nthreads(r), 1);
		assert_string_equal(stackset_thread_name(r, STACKSET_TID_ANY), "all");
	}
	/* Nothing expires at the report's "now". */
	window_advance(w, report_now_ns(r, w));
	assert_int_equal(window_total(w), 1000);
	assert_true(window_span_s(w, report_now_ns(r, w)) > 0);
	window_free_fx(w);
	stackset_free(r);
	window_free_fx(src);
	free(buf);
}

static void test_round_trip_folded(void **state)
{
	struct export_opts o = {.format = EXPORT_FOLDED};
	round_trip(&o, false);
}

static void test_round_trip_folded_per_thread(void **state)
{
	/* "worker 1" keeps its space in folded (only ';' and controls go) */
	struct window *src = known_window(), *w;
	struct export_opts o = {.format = EXPORT_FOLDED, .per_thread = true, .thread_name = names};
	struct stackset *r;
	char *buf;
	size_t len;

	w = render_load(src, &o, &buf, &len, &r);
	assert_int_equal(window_thread_total(w, 200), 700);
	assert_int_equal(window_thread_total(w, 201), 300);
	assert_string_equal(stackset_thread_name(r, 200), "worker-0");
	assert_string_equal(stackset_thread_name(r, 201), "worker 1");
	assert_int_equal(stackset_nthreads(r), 2);
	assert_true(fabs(share(w, "leaf_a", false, 201) - 66.67) < 0.1);
	assert_true(fabs(share(w, "leaf_b", false, 0) - 30.0) < 0.01);
	/* the thread root is not a frame */
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		assert_null(strstr(frames_get(window_frames(w), (uint32_t)i)->sym.func, "worker-"));
		assert_null(
		    strstr(frames_get(window_frames(w), (uint32_t)i)->sym.func, "worker 1"));
	}
	assert_int_equal(frames_span(window_frames(w)), 6);
	window_free_fx(w);
	stackset_free(r);
	window_free_fx(src);
	free(buf);
}

/* A wall-clock profile's export options: 99 Hz over 10.1 s, threads
 * named by names(). */
static struct export_opts wall_opts(enum export_format format, bool per_thread)
{
	return (struct export_opts){.format = format,
				    .period_s = 1.0 / 99,
				    .duration_s = 10.1,
				    .mode = "wall",
				    .per_thread = per_thread,
				    .thread_name = names};
}

/* r is known_window() as wall_opts() wrote it in format: all its samples,
 * its mode and period, and its duration within tol. */
static void assert_wall_meta(const struct stackset *r, enum stackset_format format, double tol)
{
	assert_int_equal(stackset_format(r), format);
	assert_int_equal(stackset_samples(r), 1000);
	assert_string_equal(stackset_mode(r), "wall");
	assert_true(fabs(stackset_period_s(r) - 1.0 / 99) < 1e-9);
	assert_true(fabs(stackset_duration_s(r) - 10.1) < tol);
}

static void test_round_trip_pprof(void **state)
{
	struct window *src = known_window(), *w;
	struct export_opts o = wall_opts(EXPORT_PPROF, false);
	struct stackset *r;
	const uint8_t *raw;
	char *buf, err[256];
	size_t len, rawn;
	int rc;

	w = render_load(src, &o, &buf, &len, &r);
	assert_wall_meta(r, STACKSET_PPROF, 1e-9);
	assert_string_equal(stackset_thread_name(r, 201), "worker 1");
	assert_int_equal(window_thread_total(w, 201), 300);
	assert_true(fabs(share(w, "leaf_a", false, 0) - 60.0) < 0.01);
	assert_true(fabs(share(w, "leaf_c", true, 0) - 10.0) < 0.01);
	/* file:line survive: line keys are distinct per line */
	bool line_seen = false;
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		const struct frame *f = frames_get(window_frames(w), (uint32_t)i);
		if (!strcmp(f->sym.func, "leaf_b"))
			line_seen = f->has_line && f->sym.line == 40 && f->sym.file &&
				    !strcmp(f->sym.file, "cpuburn.c") && f->sym.module &&
				    !strcmp(f->sym.module, "cpuburn");
	}
	assert_true(line_seen);
	window_free_fx(w);
	stackset_free(r);

	/* the same message without gzip (plain protobuf) */
	raw = gunzip(buf, len, &rawn);
	w = load((const char *)raw, rawn, &r, err, sizeof(err), &rc);
	assert_int_equal(rc, 0);
	assert_true(fabs(share(w, "leaf_b", false, 0) - 30.0) < 0.01);
	window_free_fx(w);
	stackset_free(r);
	window_free_fx(src);
	free(buf);
}

/* The frame of window w whose function is func and ELF address addr, or
 * NULL. */
static const struct frame *frame_at(struct window *w, const char *func, uint64_t addr)
{
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		const struct frame *f = frames_get(window_frames(w), (uint32_t)i);

		if (f && f->sym.func && !strcmp(f->sym.func, func) && f->origin.elf_addr == addr)
			return f;
	}
	return NULL;
}

/* Annotate offline (issue 16): a frame's origin (binary path, build-id, ELF
 * address) survives record → report, and again when a report is written
 * back; two addresses of one function stay two frames (one function row). */
static void test_round_trip_origin(void **state)
{
	struct window *src, *w, *w2;
	struct export_opts o = {.format = EXPORT_PPROF, .period_s = 1.0 / 99};
	struct stackset *r, *r2;
	uint32_t mn, a1, a2;
	char *buf, *buf2;
	size_t len, len2;
	const struct frame *f;

	assert_int_equal(window_new_fx(60, 1000000000ull, &src), 0);
	mn = fr(src, 0x5000, false, "prog", "main", "p.c", 1);
	a1 = fr(src, 0x5100, false, "prog", "hot", "p.c", 5);
	a2 = fr(src, 0x5108, false, "prog", "hot", "p.c", 6);
	/* loaded at bias 0x4000: ELF addresses 0x1000, 0x1100, 0x1108 */
	((struct frame *)frames_get(window_frames(src), mn))->origin =
	    (struct frame_origin){.path = "/opt/prog", .build_id = "0123abcd", .elf_addr = 0x1000};
	((struct frame *)frames_get(window_frames(src), a1))->origin =
	    (struct frame_origin){.path = "/opt/prog", .build_id = "0123abcd", .elf_addr = 0x1100};
	((struct frame *)frames_get(window_frames(src), a2))->origin =
	    (struct frame_origin){.path = "/opt/prog", .build_id = "0123abcd", .elf_addr = 0x1108};
	assert_int_equal(window_add(src, 5, 1, (uint32_t[]){mn, a1}, 2, 70), 0);
	assert_int_equal(window_add(src, 5, 1, (uint32_t[]){mn, a2}, 2, 30), 0);

	w = render_load(src, &o, &buf, &len, &r);
	assert_non_null(f = frame_at(w, "hot", 0x1100));
	assert_string_equal(f->origin.path, "/opt/prog");
	assert_string_equal(f->origin.build_id, "0123abcd");
	assert_string_equal(f->sym.module, "prog");
	assert_non_null(frame_at(w, "hot", 0x1108));
	assert_non_null(frame_at(w, "main", 0x1000));
	assert_true(fabs(share(w, "hot", false, 0) - 100.0) < 0.01);

	/* A report written back keeps them. */
	w2 = render_load(w, &o, &buf2, &len2, &r2);
	assert_non_null(f = frame_at(w2, "hot", 0x1108));
	assert_string_equal(f->origin.path, "/opt/prog");
	window_free_fx(w2);
	stackset_free(r2);
	free(buf2);
	window_free_fx(w);
	stackset_free(r);
	free(buf);
	window_free_fx(src);
}

static void test_round_trip_generic(void **state)
{
	struct export_opts o = {.format = EXPORT_PPROF, .period_s = 0.01, .thread_name = names};
	round_trip(&o, true);
	o.period_s = 0; /* count only */
	round_trip(&o, true);
}

/* Speedscope JSON as export writes it: back with its counts, threads,
 * mode, period and duration (issue 17: report failed on its own files). */
static void test_round_trip_speedscope(void **state)
{
	struct window *src = known_window(), *w;
	struct export_opts o = wall_opts(EXPORT_SPEEDSCOPE, true);
	struct stackset *r;
	char *buf;
	size_t len;

	w = render_load(src, &o, &buf, &len, &r);
	assert_wall_meta(r, STACKSET_SPEEDSCOPE, 1e-6);
	assert_int_equal(window_thread_total(w, 200), 700);
	assert_int_equal(window_thread_total(w, 201), 300);
	assert_string_equal(stackset_thread_name(r, 201), "worker 1");
	assert_true(fabs(share(w, "leaf_a", false, 0) - 60.0) < 0.01);
	assert_true(fabs(share(w, "leaf_c", false, 0) - share(src, "leaf_c", false, 0)) < 0.01);
	window_free_fx(w);
	stackset_free(r);
	free(buf);

	/* Counts only, one profile: weights are the counts, no period. */
	o = (struct export_opts){.format = EXPORT_SPEEDSCOPE};
	w = render_load(src, &o, &buf, &len, &r);
	assert_int_equal(stackset_samples(r), 1000);
	assert_true(stackset_period_s(r) == 0);
	assert_true(stackset_duration_s(r) == 0);
	assert_int_equal(window_thread_total(w, STACKSET_TID_ANY), 1000);
	assert_true(fabs(share(w, "leaf_b", false, 0) - 30.0) < 0.01);
	window_free_fx(w);
	stackset_free(r);
	free(buf);
	window_free_fx(src);
}

/* A speedscope file from another tool: times without a period (the
 * lightest weight stands for one sample), frames by index. */
static void test_speedscope_foreign(void **state)
{
	const char *text =
	    "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	    "\"shared\":{\"frames\":[{\"name\":\"main\"},{\"name\":\"work\",\"file\":\"w.c\","
	    "\"line\":7}]},\"profiles\":[{\"type\":\"sampled\",\"name\":\"p\",\"unit\":"
	    "\"milliseconds\",\"startValue\":0,\"endValue\":40,\"samples\":[[0,1],[0]],"
	    "\"weights\":[30,10]}]}";
	struct stackset *r;
	char err[256];
	int rc;
	struct window *w = load(text, strlen(text), &r, err, sizeof(err), &rc);

	assert_int_equal(rc, 0);
	assert_int_equal(stackset_samples(r), 4);
	assert_true(fabs(stackset_period_s(r) - 0.010) < 1e-9);
	assert_true(fabs(share(w, "work", false, 0) - 75.0) < 0.01);
	window_free_fx(w);
	stackset_free(r);
}

static void test_folded_foreign(void **state)
{
	const char *text = "# a comment\n"
			   "\n"
			   "java;Foo::bar(int, char*);memcpy_[k] 2\r\n"
			   "java;Foo::bar(int, char*) 5.6\n"
			   "java;;Interp_[j]   2\n"
			   "perl-1234;x 1\n";
	struct stackset *r;
	char err[256];
	int rc;
	struct window *w = load(text, strlen(text), &r, err, sizeof(err), &rc);

	if (rc)
		fail_msg("%s", err);
	assert_int_equal(stackset_format(r), STACKSET_FOLDED);
	assert_int_equal(window_total(w), 11); /* 5.6 rounds to 6 */
	assert_true(fabs(share(w, "Foo::bar(int, char*)", false, 0) - 600.0 / 11) < 0.01);
	assert_true(fabs(share(w, "memcpy", false, 0) - 200.0 / 11) < 0.01);
	assert_true(fabs(share(w, "Interp", false, 0) - 200.0 / 11) < 0.01);
	/* not every root is "name-TID": perl-1234 stays a frame */
	assert_true(fabs(share(w, "x", false, 0) - 100.0 / 11) < 0.01);
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		const struct frame *f = frames_get(window_frames(w), (uint32_t)i);
		if (!strcmp(f->sym.func, "memcpy"))
			assert_true(f->kernel);
		if (!strcmp(f->sym.func, "Interp"))
			assert_true(f->sym.jit && !f->kernel);
		if (!strcmp(f->sym.func, "java"))
			assert_false(f->kernel);
	}
	window_free_fx(w);
	stackset_free(r);

	/* counts past 32 bits keep their shares */
	text = "a;b 10000000000\na;c 30000000000\n";
	w = load(text, strlen(text), &r, err, sizeof(err), &rc);
	assert_int_equal(rc, 0);
	assert_true(fabs(share(w, "b", false, 0) - 25.0) < 0.01);
	assert_true(fabs(share(w, "c", false, 0) - 75.0) < 0.01);
	window_free_fx(w);
	stackset_free(r);
}

/* FlameGraph's inline mark "_[i]" (what stacktop's folded export writes
 * for an inlined function) comes back as an inlined frame, its own row. */
static void test_folded_inline(void **state)
{
	const char *text = "main;outer;hot_[i] 3\nmain;outer 1\n";
	struct stackset *r;
	char err[256];
	int rc, seen = 0;
	struct window *w = load(text, strlen(text), &r, err, sizeof(err), &rc);

	if (rc)
		fail_msg("%s", err);
	assert_true(fabs(share(w, "hot", false, 0) - 75.0) < 0.01);
	assert_true(fabs(share(w, "outer", false, 0) - 25.0) < 0.01);
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		const struct frame *f = frames_get(window_frames(w), (uint32_t)i);
		if (f && !strcmp(f->sym.func, "hot"))
			seen += f->sym.inlined && !f->kernel && !f->sym.jit;
		if (f && !strcmp(f->sym.func, "outer"))
			assert_false(f->sym.inlined);
	}
	assert_int_equal(seen, 1);
	window_free_fx(w);
	stackset_free(r);
}

static void expect_error(const void *data, size_t len, int want_rc, const char *want)
{
	struct stackset *r = (struct stackset *)1;
	char err[512] = "";
	int rc;
	struct window *w = load(data, len, &r, err, sizeof(err), &rc);

	assert_int_equal(rc, want_rc);
	assert_null(r);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
	assert_non_null(strstr(err, "test.prof"));
	window_free_fx(w);
}

static void test_bad_speedscope(void **state)
{
	const char *head = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
			   "\"shared\":{\"frames\":[{\"name\":\"main\"}]},\"profiles\":[";
	char buf[1024];

	expect_error("{\"a\":", 5, -EINVAL, "not valid JSON");
	expect_error("{\"a\":1}", 7, -EINVAL, "not a speedscope profile");
	snprintf(buf, sizeof(buf),
		 "%s{\"type\":\"evented\",\"name\":\"p\",\"unit\":\"none\",\"startValue\":0,"
		 "\"endValue\":1,\"events\":[]}]}",
		 head);
	expect_error(buf, strlen(buf), -EINVAL, "only sampled profiles");
	snprintf(buf, sizeof(buf),
		 "%s{\"type\":\"sampled\",\"name\":\"p\",\"unit\":\"none\",\"samples\":[[0,1]],"
		 "\"weights\":[1]}]}",
		 head);
	expect_error(buf, strlen(buf), -EINVAL, "not in shared.frames");
	snprintf(buf, sizeof(buf),
		 "%s{\"type\":\"sampled\",\"name\":\"p\",\"unit\":\"none\",\"samples\":[[0]],"
		 "\"weights\":[]}]}",
		 head);
	expect_error(buf, strlen(buf), -EINVAL, "do not match");
}

static void test_bad_inputs(void **state)
{
	struct window *src = known_window();
	struct export_opts o = {.format = EXPORT_PPROF, .period_s = 0.01};
	char *buf, err[256];
	size_t len;

	expect_error("", 0, -EINVAL, "test.prof is empty.");
	expect_error("main;work\n", 10, -EINVAL, "line 1 has no sample count");
	expect_error("a 1\nmain;work x\n", 16, -EINVAL, "line 2 has no sample count");
	expect_error("a 1\n 5\n", 7, -EINVAL, "line 2 has a count but no frames");
	expect_error("# only\n\n", 8, -EINVAL, "holds no stacks");
	expect_error("a 0\n", 4, -EINVAL, "holds no samples");

	/* a huge line */
	size_t big = (1u << 20) + 10;
	char *huge = malloc(big + 3);
	memset(huge, 'a', big);
	memcpy(huge + big, " 1\n", 3);
	expect_error(huge, big + 3, -EINVAL, "line 1 is longer than 1 MiB");
	free(huge);

	/* truncated and corrupt gzip */
	assert_int_equal(export_render(src, &o, &buf, &len, err, sizeof(err)), 0);
	expect_error(buf, len / 2, -EINVAL, "truncated gzip data");
	expect_error(buf, 12, -EINVAL, "truncated gzip data");
	buf[len / 2] ^= 0x55;
	buf[len / 2 + 1] ^= 0xaa;
	buf[len / 2 + 2] ^= 0x55;
	{
		struct stackset *r;
		int rc;
		struct window *w = load(buf, len, &r, err, sizeof(err), &rc);
		assert_true(rc < 0); /* corrupt: either the deflate data or the CRC */
		assert_null(r);
		window_free_fx(w);
	}
	free(buf);

	/* corrupt protobuf: a length past the end; a wrong wire type */
	expect_error("\x0a\x7f\x08\x01", 4, -EINVAL, "corrupt protobuf");
	expect_error("\x32\x00\x12\x05\x0a\x01\x07\x10\x01", 9, -EINVAL, "corrupt pprof profile");
	/* string table must start with "", sample refers to a missing location */
	expect_error("\x32\x01x", 3, -EINVAL, "string table");
	expect_error("\x0a\x04\x08\x01\x10\x02"
		     "\x12\x05\x0a\x01\x07\x10\x01"
		     "\x32\x00\x32\x01s\x32\x01"
		     "c",
		     21, -EINVAL, "missing location");
	window_free_fx(src);
}

/* A foreign pprof (tests/fuzz/corpus/pprof/foreign.pb, the shape go writes):
 * only cpu/nanoseconds values (divided by the period), an inlined call
 * (two lines in one location, innermost first), a location without lines,
 * a "[kernel.kallsyms]" mapping, no thread labels. */
static void test_foreign_pprof(void **state)
{
	struct window *w;
	struct stackset *r;
	char err[256];

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	if (report_load("tests/fuzz/corpus/pprof/foreign.pb", window_frames_mut(w), &r, err,
			sizeof(err)))
		fail_msg("%s (run from the repository root)", err);
	feed(r, w);
	assert_int_equal(stackset_format(r), STACKSET_PPROF);
	assert_int_equal(stackset_samples(r), 7); /* 50 ms + 20 ms at 10 ms */
	assert_string_equal(stackset_mode(r), "cpu");
	assert_true(fabs(stackset_period_s(r) - 0.01) < 1e-12);
	assert_true(fabs(share(w, "do_syscall_64", false, 0) - 500.0 / 7) < 0.01);
	assert_true(fabs(share(w, "0x402000", false, 0) - 200.0 / 7) < 0.01);
	assert_true(fabs(share(w, "do_syscall_64", true, 0) - 0.0) < 0.01);
	assert_int_equal(window_thread_total(w, STACKSET_TID_ANY), 7);
	/* the inlined function is called by main.main: check the trie order */
	size_t nc;
	const struct window_count *c = window_counts(w, &nc);
	bool checked = false;
	for (size_t i = 0; i < nc; i++) {
		const char *chain[8];
		size_t n = 0;
		for (uint32_t node = c[i].node; node != WINDOW_ROOT && n < 8;
		     node = window_node(w, node)->parent)
			chain[n++] =
			    frames_get(window_frames(w), window_node(w, node)->frame)->sym.func;
		assert_int_equal(n, 3);
		assert_string_equal(chain[2], "main.main");
		assert_string_equal(chain[1], "runtime.inlined");
		if (!strcmp(chain[0], "do_syscall_64")) {
			const struct frame *f =
			    frames_get(window_frames(w), window_node(w, c[i].node)->frame);
			assert_true(f->kernel);
			assert_string_equal(f->sym.module, "[kernel.kallsyms]");
			checked = true;
		}
	}
	assert_true(checked);
	for (size_t i = 0; i < frames_span(window_frames(w)); i++) {
		const struct frame *f = frames_get(window_frames(w), (uint32_t)i);
		if (!strcmp(f->sym.func, "runtime.inlined")) {
			assert_int_equal(f->sym.line, 5);
			assert_string_equal(f->sym.file, "main.go");
			assert_string_equal(f->sym.module, "prog");
		}
	}
	window_free_fx(w);
	stackset_free(r);
}

/* Wall mode: wait pseudo leaves ("[sleep]", "[lock]") round-trip as the
 * window's wait frames, so the on/off-CPU split works on a report. */
static void test_wall_waits(void **state)
{
	struct window *src, *w;
	struct stackset *r;
	struct export_opts o = {.format = EXPORT_FOLDED, .mode = "wall"};
	char *buf, err[256];
	size_t len;
	uint64_t counts[SAMPLE_WAIT_COUNT];
	int rc;

	assert_int_equal(window_new_fx(60, 1000000000ull, &src), 0);
	uint32_t mn = fr(src, 0x10, false, "prog", "main", NULL, 0);
	uint32_t sl = (uint32_t)frames_wait(window_frames_mut(src), SAMPLE_WAIT_SLEEP);
	uint32_t lk = (uint32_t)frames_wait(window_frames_mut(src), SAMPLE_WAIT_LOCK);
	uint32_t un = fr(src, 0x20, false, NULL, "[unknown]", NULL, 0);
	assert_int_equal(window_add(src, 1, 5, (uint32_t[]){mn, sl}, 2, 6), 0);
	assert_int_equal(window_add(src, 1, 5, (uint32_t[]){mn, lk}, 2, 3), 0);
	assert_int_equal(window_add(src, 1, 5, (uint32_t[]){mn, un}, 2, 1), 0);
	for (int f = 0; f < 2; f++) {
		o.format = f ? EXPORT_PPROF : EXPORT_FOLDED;
		assert_int_equal(export_render(src, &o, &buf, &len, err, sizeof(err)), 0);
		w = load(buf, len, &r, err, sizeof(err), &rc);
		assert_int_equal(rc, 0);
		assert_string_equal(stackset_mode(r), "wall");
		window_wait_counts(w, 0, counts);
		assert_int_equal(counts[SAMPLE_WAIT_SLEEP], 6);
		assert_int_equal(counts[SAMPLE_WAIT_LOCK], 3);
		assert_int_equal(counts[SAMPLE_WAIT_NONE], 1); /* "[unknown]" is no wait */
		window_free_fx(w);
		stackset_free(r);
		free(buf);
	}
	window_free_fx(src);
}

/* What the report's sampler hands out, sample by sample. */
struct seen {
	const struct frames *fr;
	int n;
	uint64_t weight[4];
	int tid[4];
	char leaf[4][16];
	int depth[4];
};

static void seen_sample(void *ctx, const struct sample *s)
{
	struct seen *sn = ctx;
	const struct frame *f;

	assert_true(sn->n < 4);
	assert_true(s->nframe_ids > 0);
	f = frames_get(sn->fr, s->frame_ids[s->nframe_ids - 1]);
	assert_non_null(f);
	snprintf(sn->leaf[sn->n], sizeof(sn->leaf[0]), "%s", f->sym.func);
	sn->weight[sn->n] = s->weight;
	sn->tid[sn->n] = s->tid;
	sn->depth[sn->n] = s->nframe_ids;
	sn->n++;
}

static void test_sampler(void **state)
{
	const char *text = "worker-7;main;f 3\nworker-7;main;g 1\nworker-8;main;f 2\n";
	struct frames *fr;
	struct stackset *r;
	struct sampler *s;
	struct sampler_stats st;
	struct seen sn = {0};
	struct sampler_sink sink = {.sample = seen_sample, .ctx = &sn};
	char err[256];

	assert_int_equal(frames_new(NULL, &fr), 0);
	assert_int_equal(report_load_mem(text, strlen(text), "t", fr, &r, err, sizeof(err)), 0);
	assert_int_equal(report_sampler_new(r, &s), 0);
	sn.fr = fr;
	assert_null(sampler_mode(s));
	assert_int_equal(sampler_nthreads(s), 2);
	assert_true(sampler_has_thread(s, 7));
	assert_false(sampler_has_thread(s, 9));
	assert_int_equal(sampler_add_thread(s, 0, 9), 0);
	assert_int_equal(sampler_tick_ns(s), 0);
	/* Every stored stack once, in file order, frames outermost first. */
	assert_int_equal(sampler_collect(s, REPORT_TIME_NS, &sink), 3);
	assert_int_equal(sn.n, 3);
	assert_string_equal(sn.leaf[0], "f");
	assert_string_equal(sn.leaf[1], "g");
	assert_string_equal(sn.leaf[2], "f");
	assert_int_equal(sn.weight[0], 3);
	assert_int_equal(sn.weight[1], 1);
	assert_int_equal(sn.weight[2], 2);
	assert_int_equal(sn.tid[0], 7);
	assert_int_equal(sn.tid[2], 8);
	assert_int_equal(sn.depth[0], 2); /* the thread root is not a frame */
	/* Then nothing more: the profile is all there is. */
	assert_int_equal(sampler_collect(s, REPORT_TIME_NS + 1, &sink), 0);
	assert_int_equal(sn.n, 3);
	sampler_stats(s, &st);
	assert_int_equal(st.samples, 6);
	assert_int_equal(st.lost, 0);
	sampler_stop(s);
	sampler_free(s);
	stackset_free(r);
	frames_free(fr);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/test_report.XXXXXX", err[256];
	struct window *w;
	struct stackset *r;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "m;f 3\nm;g 1\n", 12), 12);
	close(fd);
	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	assert_int_equal(report_load(path, window_frames_mut(w), &r, err, sizeof(err)), 0);
	feed(r, w);
	assert_true(fabs(share(w, "f", false, 0) - 75.0) < 0.01);
	window_free_fx(w);
	stackset_free(r);
	unlink(path);
	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	assert_int_equal(report_load(path, window_frames_mut(w), &r, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot open "));
	assert_non_null(strstr(err, "No such file or directory"));
	assert_int_equal(report_load("/tmp", window_frames_mut(w), &r, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	window_free_fx(w);
}

/* A small .pb.gz of millions of empty Sample messages (2 bytes each on
 * the wire, ~100 in memory once unpacked) must be refused within the caps
 * report.h documents, not unpacked into hundreds of MiB. The load runs in a
 * child, whose peak RSS wait4 reports. */
static void test_amplifying_pprof(void **state)
{
	const size_t nsamples = 4u << 20;
	size_t rawlen = 4 + 2 * nsamples, gzcap = rawlen / 100 + 65536;
	uint8_t *raw = malloc(rawlen), *gz = malloc(gzcap);
	struct rusage self, child;
	z_stream z = {0};
	int pipefd[2], status;
	char msg[512] = "";
	pid_t pid;

	assert_non_null(raw);
	assert_non_null(gz);
	memcpy(raw, "\x32\x00\x0a\x00", 4); /* string_table "", sample_type {} */
	for (size_t i = 0; i < nsamples; i++)
		memcpy(raw + 4 + 2 * i, "\x12\x00", 2); /* sample {} */
	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = raw;
	z.avail_in = (uInt)rawlen;
	z.next_out = gz;
	z.avail_out = (uInt)gzcap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	size_t gzlen = z.total_out;
	deflateEnd(&z);
	free(raw);
	assert_true(gzlen < 16384); /* a small file */

	assert_int_equal(pipe(pipefd), 0);
	getrusage(RUSAGE_SELF, &self);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct window *w;
		struct stackset *r;
		char err[400] = "";
		close(pipefd[0]);
		if (window_new_fx(60, 1000000000ull, &w))
			_exit(3);
		int rc = report_load_mem(gz, gzlen, "amp.pb.gz", window_frames_mut(w), &r, err,
					 sizeof(err));
		dprintf(pipefd[1], "%d %s", rc, err);
		_exit(0);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], msg, sizeof(msg) - 1);
	close(pipefd[0]);
	assert_int_equal(wait4(pid, &status, 0, &child), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(n > 0);
	msg[n] = '\0';
	/* Refused with one sentence: 64 x 8 KiB + 1 MiB of inflated data at
	 * most, so it does not even reach protobuf-c. */
	assert_int_equal(atoi(msg), -EFBIG);
	assert_non_null(strstr(msg, "amp.pb.gz: inflates to more than"));
	assert_non_null(strstr(msg, "not loading it."));
	/* ru_maxrss is in KiB; the child starts with our pages. */
	assert_true(child.ru_maxrss - self.ru_maxrss < 48 * 1024);
	free(gz);
}

/* The same samples, plain protobuf (no gzip): protobuf-c's allocations are
 * counted and capped at pprof_unpack_limit of its size. */
static void test_amplifying_protobuf(void **state)
{
	const size_t nsamples = 1u << 20;
	size_t rawlen = 4 + 2 * nsamples;
	uint8_t *raw = malloc(rawlen);
	struct window *w;
	struct stackset *r;
	char err[400];

	assert_non_null(raw);
	memcpy(raw, "\x32\x00\x0a\x00", 4);
	for (size_t i = 0; i < nsamples; i++)
		memcpy(raw + 4 + 2 * i, "\x12\x00", 2);
	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	assert_int_equal(
	    report_load_mem(raw, rawlen, "amp.pb", window_frames_mut(w), &r, err, sizeof(err)),
	    -EFBIG);
	assert_null(r);
	assert_non_null(strstr(err, "amp.pb: unpacking it would take more than 80 MiB"));
	assert_int_equal(pprof_unpack_limit(rawlen) >> 20, 80);
	window_free_fx(w);
	free(raw);
}

TEST_MAIN(NULL, NULL, TEST(test_round_trip_folded), TEST(test_round_trip_folded_per_thread),
	  TEST(test_round_trip_pprof), TEST(test_round_trip_origin), TEST(test_round_trip_generic),
	  TEST(test_folded_foreign), TEST(test_folded_inline), TEST(test_bad_inputs),
	  TEST(test_foreign_pprof), TEST(test_wall_waits), TEST(test_load_file), TEST(test_sampler),
	  TEST(test_amplifying_pprof), TEST(test_amplifying_protobuf),
	  TEST(test_round_trip_speedscope), TEST(test_speedscope_foreign),
	  TEST(test_bad_speedscope))
