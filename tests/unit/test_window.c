/* Unit tests for window: buckets and expiry, reset, per-thread totals, the
 * top-N aggregation (self/total, recursion, hidden kernel frames, function
 * vs line keys), and the trie forgetting what ages out (nodes and their
 * frames freed on expiry and reset, ids reused, answers unchanged). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "runner.h"

#include "stacktop/ui/view.h" /* view_wait_split */
#include "stacktop/model/window.h"
#include "window_fixture.h"

/* cmocka 1.1 has no assert_double_equal. */
#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

#define SEC 1000000000ull

/* Intern a user frame at pc in pid with a named function. */
static uint32_t fn(struct window *w, int pid, uint64_t pc, const char *mod, const char *func,
		   const char *file, int line)
{
	struct sym_info si = {.func = func, .module = mod, .file = file, .line = line};
	int64_t id = frames_preset(window_frames_mut(w), pid, pc, false, &si, file != NULL);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* A window of seconds 1 s buckets with n frames of pid 1 in module "m":
 * f[i] is funcs[i] at pc 0x10 * (i + 1). */
static struct window *window_m(unsigned seconds, uint32_t *f, const char *const *funcs, size_t n)
{
	struct window *w;

	assert_int_equal(window_new_fx(seconds, SEC, &w), 0);
	for (size_t i = 0; i < n; i++)
		f[i] = fn(w, 1, 0x10 * (i + 1), "m", funcs[i], NULL, 0);
	return w;
}

/* A function of the test program "app" (pid 1) at pc, no source line. */
static uint32_t app_fn(struct window *w, uint64_t pc, const char *func)
{
	return fn(w, 1, pc, "app", func, NULL, 0);
}

static uint32_t kfn(struct window *w, uint64_t pc, const char *func)
{
	struct sym_info si = {.func = func, .module = "[kernel]", .kernel = true};
	int64_t id = frames_preset(window_frames_mut(w), 1, pc, true, &si, false);

	assert_true(id >= 0);
	return (uint32_t)id;
}

static const struct window_top_row *find_row(struct window *w, const struct window_top_row *r,
					     size_t n, const char *func, int line)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct frame *f = frames_get(window_frames(w), r[i].frame);

		if (f->sym.func && strcmp(f->sym.func, func) == 0 && (!line || f->sym.line == line))
			return &r[i];
	}
	return NULL;
}

static void test_intern(void **state)
{
	struct window *w = *state;
	int64_t a, b, c, d;

	a = frames_preset(window_frames_mut(w), 10, 0x1000, false, NULL, false);
	b = frames_preset(window_frames_mut(w), 10, 0x1000, true, NULL, false);
	c = frames_preset(window_frames_mut(w), 11, 0x1000, false, NULL, false);
	d = frames_preset(window_frames_mut(w), 10, 0x1000, false, NULL, false);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 2);
	assert_int_equal(d, a);
	assert_int_equal(frames_span(window_frames(w)), 3);
	assert_int_equal(frames_get(window_frames(w), 1)->kernel, true);
	assert_null(frames_get(window_frames(w), 3));
	/* Same path twice → same leaf node; a prefix shares nodes. */
	uint32_t s1[] = {0, 2}, s2[] = {0, 2}, s3[] = {0};
	assert_int_equal(window_add(w, 1 * SEC, 5, s1, 2, 1), 0);
	assert_int_equal(window_add(w, 1 * SEC, 5, s2, 2, 1), 0);
	assert_int_equal(window_add(w, 1 * SEC, 5, s3, 1, 1), 0);
	assert_int_equal(window_nnodes(w), 3); /* root, 0, 0→2 */
	assert_int_equal(window_node(w, 2)->parent, 1);
	assert_int_equal(window_node(w, 2)->depth, 2);
	assert_int_equal(window_node(w, 2)->frame, 2);
	size_t n;
	const struct window_count *cs = window_counts(w, &n);
	assert_int_equal(n, 2);
	uint64_t sum = cs[0].count + cs[1].count;
	assert_int_equal(sum, 3);
	/* Bad input is refused. */
	uint32_t bad[] = {99};
	assert_int_equal(window_add(w, 1 * SEC, 5, bad, 1, 1), -EINVAL);
	assert_int_equal(window_add(w, 1 * SEC, 5, s1, 0, 1), -EINVAL);
}

/* After the clock moves to now, w counts total samples. */
static void assert_total_at(struct window *w, uint64_t now, uint64_t total)
{
	window_advance(w, now);
	assert_int_equal(window_total(w), total);
}

static void test_expire(void **state)
{
	uint32_t f[1];
	struct window *w = window_m(10, f, (const char *[]){"a"}, 1);

	/* One sample in each of seconds 0..4 (bucket 0..4). */
	for (int s = 0; s < 5; s++)
		assert_int_equal(window_add(w, s * SEC + SEC / 2, 7, f, 1, 1), 0);
	assert_int_equal(window_total(w), 5);
	/* Bucket 0 lives while now < 10 s, so at 9.999 s all five remain. */
	assert_total_at(w, 10 * SEC - 1, 5);
	assert_total_at(w, 10 * SEC, 4);
	assert_total_at(w, 12 * SEC + 5, 2);
	assert_int_equal(window_thread_total(w, 7), 2);
	size_t n;
	const struct window_count *c = window_counts(w, &n);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].count, 2);
	/* Time does not run backwards: an old now changes nothing. */
	assert_total_at(w, 1 * SEC, 2);
	/* A sample already out of the window is not counted. */
	assert_int_equal(window_add(w, 2 * SEC, 7, f, 1, 1), 0);
	assert_int_equal(window_total(w), 2);
	/* Weight counts; adding at 13 s first expires second 3. */
	assert_int_equal(window_add(w, 13 * SEC, 7, f, 1, 3), 0);
	assert_int_equal(window_total(w), 4);
	/* At 14 s the window is buckets 5..14: second 4 leaves. */
	assert_total_at(w, 14 * SEC, 3);
	assert_total_at(w, 23 * SEC - 1, 3);
	assert_total_at(w, 23 * SEC, 0);
	window_counts(w, &n);
	assert_int_equal(n, 0);
	window_free_fx(w);
}

static void test_big_gap_and_span(void **state)
{
	uint32_t f[2];
	struct window *w = window_m(60, f, (const char *[]){"main", "work"}, 2);

	assert_near(window_span_s(w, 5 * SEC), 0.0);
	for (int i = 0; i < 600; i++)
		assert_int_equal(window_add(w, 100 * SEC + i * (SEC / 10), i % 4, f, 2, 1), 0);
	assert_int_equal(window_total(w), 600);
	/* Live at 160 s: buckets 101..160, so the data spans 59 s. */
	assert_near(window_span_s(w, 160 * SEC), 59.0);
	assert_near(window_span_s(w, 159 * SEC + SEC / 2), 59.5);
	assert_near(window_span_s(w, 130 * SEC), 30.0);
	assert_int_equal(window_thread_total(w, 1), 150);
	/* A day later: everything expires at once. */
	uint64_t t0 = (uint64_t)time(NULL);
	window_advance(w, 100 * SEC + 86400 * SEC);
	assert_true((uint64_t)time(NULL) - t0 < 2);
	assert_int_equal(window_total(w), 0);
	assert_int_equal(window_thread_total(w, 1), 0);
	assert_near(window_span_s(w, 100 * SEC + 86400 * SEC), 0.0);
	/* The trie went with the samples, and the frames only it held. */
	assert_int_equal(window_live_nodes(w), 0);
	assert_int_equal(frames_live(window_frames(w)), 0);
	/* And the window works afterwards, with the frames interned again. */
	f[0] = fn(w, 1, 0x10, "m", "main", NULL, 0);
	f[1] = fn(w, 1, 0x20, "m", "work", NULL, 0);
	assert_int_equal(window_add(w, 100 * SEC + 86401 * SEC, 1, f, 2, 1), 0);
	assert_int_equal(window_total(w), 1);
	window_free_fx(w);
}

static void test_reset_and_tids(void **state)
{
	uint32_t f[1];
	struct window *w = window_m(60, f, (const char *[]){"a"}, 1);

	for (int i = 0; i < 10; i++)
		assert_int_equal(window_add(w, SEC + i, 100 + i % 3, f, 1, 1), 0);
	assert_int_equal(window_thread_total(w, 100), 4);
	assert_int_equal(window_thread_total(w, 101), 3);
	assert_int_equal(window_thread_total(w, 102), 3);
	assert_int_equal(window_thread_total(w, 103), 0);
	size_t n;
	window_counts(w, &n);
	assert_int_equal(n, 3);
	window_reset(w);
	assert_int_equal(window_total(w), 0);
	assert_int_equal(window_thread_total(w, 100), 0);
	window_counts(w, &n);
	assert_int_equal(n, 0);
	/* The reset freed the trie, and the frame only it held. */
	assert_int_equal(window_live_nodes(w), 0);
	assert_int_equal(frames_live(window_frames(w)), 0);
	assert_null(frames_get(window_frames(w), f[0]));
	f[0] = fn(w, 1, 0x10, "m", "a", NULL, 0);
	assert_int_equal(window_add(w, 2 * SEC, 100, f, 1, 1), 0);
	assert_int_equal(window_live_nodes(w), 1);
	assert_int_equal(window_total(w), 1);
	/* The reset bucket is reused without double counting on expiry. */
	assert_total_at(w, 62 * SEC, 0);
	window_free_fx(w);
}

/* window_top for q into *r (free it), checking it has n rows over total
 * samples. Returns n. */
static size_t top_expect(struct window *w, const struct window_top_query *q,
			 struct window_top_row **r, size_t n, uint64_t total)
{
	size_t got_n;
	uint64_t got_total;

	assert_int_equal(window_top(w, q, r, &got_n, &got_total), 0);
	assert_int_equal(got_total, total);
	assert_int_equal(got_n, n);
	return got_n;
}

/* window_top for q into *r (free it), checking it has n rows (whatever the
 * total). Returns n. */
static size_t top_rows(struct window *w, const struct window_top_query *q,
		       struct window_top_row **r, size_t n)
{
	size_t got_n;
	uint64_t got_total;

	assert_int_equal(window_top(w, q, r, &got_n, &got_total), 0);
	assert_int_equal(got_n, n);
	return got_n;
}

static void test_top_recursion(void **state)
{
	struct window *w = *state;
	struct window_top_row *r;
	size_t n;

	uint32_t a = fn(w, 1, 0x10, "m", "a", NULL, 0);
	uint32_t b = fn(w, 1, 0x20, "m", "b", NULL, 0);
	uint32_t a2 = fn(w, 1, 0x11, "m", "a", NULL, 0); /* another pc in a */
	uint32_t c = fn(w, 1, 0x30, "m", "c", NULL, 0);
	uint32_t s1[] = {a, b, a2, c};
	uint32_t s2[] = {a, b};
	assert_int_equal(window_add(w, SEC, 1, s1, 4, 1), 0);
	assert_int_equal(window_add(w, SEC, 2, s2, 2, 1), 0);
	assert_int_equal(window_add(w, SEC, 2, s2, 2, 1), 0);
	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION};
	n = top_expect(w, &q, &r, 3, 3);
	const struct window_top_row *ra = find_row(w, r, n, "a", 0);
	const struct window_top_row *rb = find_row(w, r, n, "b", 0);
	const struct window_top_row *rc = find_row(w, r, n, "c", 0);
	assert_non_null(ra);
	assert_int_equal(ra->total, 3); /* once per stack, not 4 */
	assert_int_equal(ra->self, 0);
	assert_int_equal(rb->self, 2);
	assert_int_equal(rb->total, 3);
	assert_int_equal(rc->self, 1);
	assert_int_equal(rc->total, 1);
	free(r);
	/* Thread filter. */
	q.tid = 2;
	n = top_expect(w, &q, &r, 2, 2);
	assert_null(find_row(w, r, n, "c", 0));
	assert_int_equal(find_row(w, r, n, "b", 0)->self, 2);
	free(r);
	/* Empty window: zero rows, and rows is still freeable. */
	window_reset(w);
	q.tid = 0;
	n = top_expect(w, &q, &r, 0, 0);
	free(r);
}

static void test_top_kernel_and_lines(void **state)
{
	struct window *w = *state;
	struct window_top_row *r;
	size_t n;

	uint32_t m = fn(w, 1, 0x10, "srv", "main", "srv.c", 10);
	uint32_t p1 = fn(w, 1, 0x20, "srv", "parse", "parse.c", 20);
	uint32_t p2 = fn(w, 1, 0x24, "srv", "parse", "parse.c", 21);
	uint32_t k1 = kfn(w, 0xffff1000, "entry_SYSCALL_64");
	uint32_t k2 = kfn(w, 0xffff2000, "copy_user");
	/* Same function in another pid: merges by name. */
	uint32_t o = fn(w, 2, 0x20, "srv", "parse", "parse.c", 20);
	uint32_t raw = (uint32_t)frames_preset(window_frames_mut(w), 1, 0xdead, false, NULL,
					       false); /* no sym */
	uint32_t s1[] = {m, p1, k1, k2};
	uint32_t s2[] = {m, p2};
	uint32_t s3[] = {o};
	uint32_t s4[] = {m, raw};
	assert_int_equal(window_add(w, SEC, 1, s1, 4, 5), 0);
	assert_int_equal(window_add(w, SEC, 1, s2, 2, 2), 0);
	assert_int_equal(window_add(w, SEC, 3, s3, 1, 1), 0);
	assert_int_equal(window_add(w, SEC, 1, s4, 2, 1), 0);

	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION};
	n = top_expect(w, &q, &r, 5, 9); /* main parse entry copy_user raw */
	assert_int_equal(find_row(w, r, n, "copy_user", 0)->self, 5);
	assert_int_equal(find_row(w, r, n, "entry_SYSCALL_64", 0)->total, 5);
	assert_int_equal(find_row(w, r, n, "parse", 0)->self, 3);
	assert_int_equal(find_row(w, r, n, "parse", 0)->total, 8);
	assert_int_equal(find_row(w, r, n, "main", 0)->total, 8);
	free(r);

	q.hide_kernel = true;
	n = top_expect(w, &q, &r, 3, 9);
	assert_null(find_row(w, r, n, "copy_user", 0));
	assert_int_equal(find_row(w, r, n, "parse", 0)->self, 8);
	assert_int_equal(find_row(w, r, n, "main", 0)->self, 0);
	free(r);

	q.key = WINDOW_KEY_LINE;
	n = top_rows(w, &q, &r, 4); /* main, parse:20 (both pids), parse:21, raw */
	assert_int_equal(find_row(w, r, n, "parse", 20)->self, 6);
	assert_int_equal(find_row(w, r, n, "parse", 21)->self, 2);
	assert_int_equal(find_row(w, r, n, "main", 10)->total, 8);
	free(r);
}

/* 10k distinct stacks of depth 20 over 8 threads: adds, a top query and a
 * full expiry all finish quickly. */
static void test_many_stacks(void **state)
{
	struct window *w;
	struct window_top_row *r;
	size_t n;
	uint32_t frames[2000], stack[20];
	char names[2000][12];
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(window_new_fx(60, SEC, &w), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i % 500);
		frames[i] = fn(w, 1, 0x1000 + (uint64_t)i * 16, "m", names[i], NULL, 0);
	}
	for (int s = 0; s < 10000; s++) {
		unsigned x = (unsigned)s * 2654435761u;
		for (int d = 0; d < 20; d++) {
			x = x * 1103515245u + 12345u;
			stack[d] = frames[(d == 19) ? (unsigned)s % 2000 : (x >> 8) % 2000];
		}
		stack[18] = frames[(s / 2000) % 2000];
		assert_int_equal(window_add(w, (uint64_t)(s % 50) * SEC, s % 8, stack, 20, 1), 0);
	}
	assert_int_equal(window_total(w), 10000);
	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION};
	n = top_expect(w, &q, &r, 500, 10000);
	uint64_t self = 0;
	for (size_t i = 0; i < n; i++) {
		self += r[i].self;
		assert_true(r[i].total <= 10000 && r[i].self <= r[i].total);
	}
	assert_int_equal(self, 10000);
	free(r);
	assert_total_at(w, 200 * SEC, 0);
	window_counts(w, &n);
	assert_int_equal(n, 0);
	window_free_fx(w);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 3);
}

/* The trie holds exactly the paths of the live counts: every node on the
 * path of a (node, tid) count is live, and no other node is. */
static void assert_trie_is_live_paths(const struct window *w)
{
	size_t nn = window_nnodes(w), nc, live = 0;
	const struct window_count *c = window_counts(w, &nc);
	uint8_t *on = calloc(nn + 1, 1);

	assert_non_null(on);
	for (size_t k = 0; k < nc; k++)
		for (uint32_t id = c[k].node; id != WINDOW_ROOT && !on[id];
		     id = window_node(w, id)->parent) {
			assert_non_null(window_node(w, id));
			on[id] = 1;
			live++;
		}
	for (size_t id = 1; id < nn; id++)
		assert_int_equal(window_node(w, (uint32_t)id) != NULL, on[id]);
	assert_int_equal(window_live_nodes(w), live);
	free(on);
}

/* Random adds against a brute-force reference: after every step the live
 * (node, tid) counts equal the samples whose bucket is still in the window
 * (this exercises removal from the running sum in every order). */
static void test_random_reference(void **state)
{
	enum { NS = 4000, NF = 40 };
	static uint64_t tm[NS];
	static int tid[NS];
	static uint32_t leaf[NS];
	struct window *w;
	uint32_t f[NF];
	unsigned x = 12345;

	assert_int_equal(window_new_fx(10, SEC, &w), 0);
	for (int i = 0; i < NF; i++) {
		f[i] = fn(w, 1, 0x100 + (uint64_t)i, "m", "g", NULL, 0);
		frames_ref(window_frames_mut(w), f[i]); /* kept across expiry */
	}
	for (int i = 0; i < NS; i++) {
		uint32_t st[2];

		x = x * 1103515245u + 12345u;
		tm[i] =
		    (uint64_t)i * (SEC / 100) + ((x >> 4) % 3) * SEC; /* slightly out of order */
		tid[i] = 1 + (int)((x >> 12) % 5);
		st[0] = f[(x >> 16) % 3];
		st[1] = f[(x >> 20) % NF];
		assert_int_equal(window_add(w, tm[i], tid[i], st, 2, 1), 0);
		leaf[i] = 0;
		for (size_t k = 0; k < window_nnodes(w); k++) {
			const struct window_node *nd = window_node(w, (uint32_t)k);
			if (nd && nd->depth == 2 && nd->frame == st[1] &&
			    window_node(w, nd->parent)->frame == st[0])
				leaf[i] = (uint32_t)k;
		}
		if (i % 97)
			continue;
		/* Reference: samples whose bucket is live now. */
		uint64_t newest = 0, want = 0;
		for (int j = 0; j <= i; j++)
			if (tm[j] / SEC > newest)
				newest = tm[j] / SEC;
		size_t n;
		const struct window_count *c = window_counts(w, &n);
		uint64_t got = 0;
		for (size_t k = 0; k < n; k++) {
			uint64_t ref = 0;
			for (int j = 0; j <= i; j++)
				if (leaf[j] == c[k].node && tid[j] == c[k].tid &&
				    tm[j] / SEC + 10 > newest)
					ref++;
			assert_int_equal(c[k].count, ref);
			assert_true(c[k].count > 0);
			got += c[k].count;
		}
		for (int j = 0; j <= i; j++)
			if (tm[j] / SEC + 10 > newest)
				want++;
		assert_int_equal(got, want);
		assert_int_equal(window_total(w), want);
		assert_trie_is_live_paths(w);
	}
	for (int i = 0; i < NF; i++)
		frames_unref(window_frames_mut(w), f[i]);
	window_free_fx(w);
}

/* GC share: stacks through a collector's function (any depth, kernel
 * frames under it too), or on a GC thread; wall mode's waits are not CPU. */
static void test_gc_counts(void **state)
{
	struct window *w = *state;
	uint64_t running, gc;

	uint32_t main_ = app_fn(w, 0x100, "main");
	uint32_t work = app_fn(w, 0x200, "work");
	uint32_t mark = fn(w, 1, 0x300, "gosrv", "runtime.gcBgMarkWorker", NULL, 0);
	uint32_t scan = fn(w, 1, 0x400, "gosrv", "runtime.scanobject", NULL, 0);
	uint32_t other = fn(w, 1, 0x500, "gosrv", "runtime.memmove", NULL, 0);
	uint32_t kpage = kfn(w, 0xffffffff81000100ull, "clear_page");
	int64_t sl = frames_wait(window_frames_mut(w), SAMPLE_WAIT_SLEEP);
	assert_true(sl >= 0);

	uint32_t s_work[] = {main_, work}, s_mark[] = {mark, other, kpage}, s_scan[] = {mark, scan};
	uint32_t s_sleep[] = {main_, work, (uint32_t)sl};
	assert_int_equal(window_add(w, 1 * SEC, 10, s_work, 2, 6), 0);
	assert_int_equal(window_add(w, 1 * SEC, 11, s_mark, 3, 3), 0);
	assert_int_equal(window_add(w, 1 * SEC, 11, s_scan, 2, 1), 0);
	assert_int_equal(window_add(w, 1 * SEC, 12, s_work, 2, 2), 0);
	assert_int_equal(window_add(w, 1 * SEC, 12, s_sleep, 3, 50), 0);
	gc = window_gc_counts(w, NULL, 0, &running);
	assert_int_equal(running, 12);
	assert_int_equal(gc, 4);
	/* thread 12 is a GC thread (by its name): its running samples too */
	int tids[] = {5, 12, 40};
	gc = window_gc_counts(w, tids, 3, &running);
	assert_int_equal(running, 12);
	assert_int_equal(gc, 6);
}

/* Wall mode: wait pseudo frames, the per-row split by wait kind, the
 * process split line and idle threads. */
static void test_wait_frames(void **state)
{
	struct window *w = *state;
	struct window_top_row *rows;
	size_t n;
	uint64_t total, counts[SAMPLE_WAIT_COUNT];
	char buf[160];

	uint32_t main_ = app_fn(w, 0x100, "main");
	uint32_t take = app_fn(w, 0x200, "take_lock");
	uint32_t rd = app_fn(w, 0x300, "read_pipe");
	uint32_t nap = app_fn(w, 0x400, "nap");
	uint32_t work = app_fn(w, 0x500, "work");
	int64_t lock = frames_wait(window_frames_mut(w), SAMPLE_WAIT_LOCK);
	int64_t io = frames_wait(window_frames_mut(w), SAMPLE_WAIT_IO);
	int64_t sl = frames_wait(window_frames_mut(w), SAMPLE_WAIT_SLEEP);
	assert_true(lock >= 0 && io >= 0 && sl >= 0);
	assert_int_equal(frames_wait(window_frames_mut(w), SAMPLE_WAIT_LOCK),
			 lock); /* interned once */
	assert_int_equal(frames_wait(window_frames_mut(w), SAMPLE_WAIT_NONE), -EINVAL);
	assert_int_equal(frames_wait(window_frames_mut(w), SAMPLE_WAIT_COUNT), -EINVAL);
	const struct frame *lf = frames_get(window_frames(w), (uint32_t)lock);
	assert_int_equal(lf->wait, SAMPLE_WAIT_LOCK);
	assert_string_equal(lf->sym.func, "[lock]");
	assert_string_equal(lf->sym.module, "[wait]");
	assert_int_equal(frames_get(window_frames(w), take)->wait, 0);

	/* tid 10: 6 lock in take_lock, 2 running in take_lock (work);
	 * tid 11: 4 I/O in read_pipe; tid 12: 8 sleep in nap. */
	uint32_t s_lock[] = {main_, take, (uint32_t)lock}, s_run[] = {main_, take, work};
	uint32_t s_io[] = {main_, rd, (uint32_t)io}, s_sl[] = {main_, nap, (uint32_t)sl};
	assert_int_equal(window_add(w, 1 * SEC, 10, s_lock, 3, 6), 0);
	assert_int_equal(window_add(w, 1 * SEC, 10, s_run, 3, 2), 0);
	assert_int_equal(window_add(w, 1 * SEC, 11, s_io, 3, 4), 0);
	assert_int_equal(window_add(w, 1 * SEC, 12, s_sl, 3, 8), 0);

	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION};
	assert_int_equal(window_top(w, &q, &rows, &n, &total), 0);
	assert_int_equal(total, 20);
	assert_null(find_row(w, rows, n, "[lock]", 0)); /* no rows of their own */
	const struct window_top_row *r = find_row(w, rows, n, "take_lock", 0);
	assert_non_null(r);
	assert_int_equal(r->self, 6); /* the wait frame's self goes to the real leaf */
	assert_int_equal(r->total, 8);
	assert_int_equal(r->wait[SAMPLE_WAIT_LOCK], 6);
	assert_int_equal(r->wait[SAMPLE_WAIT_NONE], 2);
	r = find_row(w, rows, n, "main", 0);
	assert_int_equal(r->total, 20);
	assert_int_equal(r->wait[SAMPLE_WAIT_LOCK], 6);
	assert_int_equal(r->wait[SAMPLE_WAIT_IO], 4);
	assert_int_equal(r->wait[SAMPLE_WAIT_SLEEP], 8);
	assert_int_equal(r->wait[SAMPLE_WAIT_NONE], 2);
	assert_int_equal(find_row(w, rows, n, "nap", 0)->self, 8);
	free(rows);

	q.include_wait_rows = true;
	assert_int_equal(window_top(w, &q, &rows, &n, &total), 0);
	r = find_row(w, rows, n, "[lock]", 0);
	assert_non_null(r);
	assert_int_equal(r->self, 6);
	assert_int_equal(find_row(w, rows, n, "take_lock", 0)->self, 0);
	free(rows);

	/* Idle: only waiting for work. A read of a pipe or a sleep may be what
	 * the program waits for: not idle (issue 17). */
	assert_false(window_thread_idle(w, 10));
	assert_false(window_thread_idle(w, 11));
	assert_false(window_thread_idle(w, 12));
	assert_false(window_thread_idle(w, 99)); /* no samples: not known idle */
	int64_t idle = frames_wait(window_frames_mut(w), SAMPLE_WAIT_IDLE);
	uint32_t job = app_fn(w, 0x600, "get_job");
	uint32_t s_idle[] = {main_, job, (uint32_t)idle};
	assert_int_equal(window_add(w, 1 * SEC, 13, s_idle, 3, 5), 0);
	assert_true(window_thread_idle(w, 13));
	q.include_wait_rows = false;
	q.hide_idle = true;
	assert_int_equal(window_top(w, &q, &rows, &n, &total), 0);
	assert_int_equal(total, 20);
	assert_null(find_row(w, rows, n, "get_job", 0));
	assert_non_null(find_row(w, rows, n, "nap", 0));
	assert_non_null(find_row(w, rows, n, "read_pipe", 0));
	assert_int_equal(find_row(w, rows, n, "main", 0)->total, 20);
	free(rows);

	/* The split line. */
	assert_int_equal(window_wait_counts(w, 0, counts), 25);
	assert_int_equal(counts[SAMPLE_WAIT_NONE], 2);
	assert_int_equal(counts[SAMPLE_WAIT_SLEEP], 8);
	assert_int_equal(counts[SAMPLE_WAIT_IDLE], 5);
	/* (worded by the view layer) */
	view_wait_split(counts, false, buf, sizeof(buf));
	assert_string_equal(buf, "running 8% \xc2\xb7 lock 24% \xc2\xb7 I/O 16% \xc2\xb7 sleep 32% "
				 "\xc2\xb7 idle 20%");
	view_wait_split(counts, true, buf, sizeof(buf));
	assert_string_equal(buf, "running 8%, lock 24%, I/O 16%, sleep 32%, idle 20%");
	view_wait_split(counts, false, buf, 12); /* cut, still terminated */
	assert_int_equal(strlen(buf), 11);
	window_wait_counts(w, 11, counts);
	view_wait_split(counts, false, buf, sizeof(buf));
	assert_string_equal(buf, "I/O 100%");
	assert_int_equal(window_wait_counts(w, 99, counts), 0);
	view_wait_split(counts, false, buf, sizeof(buf));
	assert_string_equal(buf, "");

	/* A worker seen running once in 40 (2.5%) still waits for work; at 3
	 * in 40 (7.5%) it does not. */
	uint32_t s_job[] = {main_, job};
	assert_int_equal(window_add(w, 1 * SEC, 14, s_idle, 3, 39), 0);
	assert_int_equal(window_add(w, 1 * SEC, 14, s_job, 2, 1), 0);
	assert_true(window_thread_idle(w, 14));
	assert_int_equal(window_add(w, 1 * SEC, 14, s_job, 2, 2), 0);
	assert_false(window_thread_idle(w, 14));

	/* Expiry takes the waits with it. */
	window_advance(w, 70 * SEC);
	assert_int_equal(window_wait_counts(w, 0, counts), 0);
	assert_false(window_thread_idle(w, 11));
}

/* ---- the trie forgets what ages out ---- */

/* Nodes go with the last count that ends at them or below them; a prefix
 * shared with a live stack stays; their frames go with them. */
static void test_free_on_expire(void **state)
{
	uint32_t f[4];
	struct window *w = window_m(10, f, (const char *[]){"a", "b", "c", "d"}, 4);
	const struct frames *fr = window_frames(w);

	uint32_t abc[] = {f[0], f[1], f[2]}, abd[] = {f[0], f[1], f[3]};
	assert_int_equal(window_live_nodes(w), 0);
	assert_int_equal(window_add(w, 0 * SEC, 1, abc, 3, 1), 0);
	assert_int_equal(window_add(w, 0 * SEC, 2, abc, 3, 1), 0); /* same leaf, other tid */
	assert_int_equal(window_add(w, 5 * SEC, 1, abd, 3, 1), 0);
	assert_int_equal(window_live_nodes(w), 4); /* a, a>b, a>b>c, a>b>d */
	assert_int_equal(frames_live(fr), 4);
	assert_trie_is_live_paths(w);
	/* Second 0 leaves: c's node goes (both its counts), a and b stay
	 * under d. */
	assert_total_at(w, 10 * SEC, 1);
	assert_int_equal(window_live_nodes(w), 3);
	assert_int_equal(frames_live(fr), 3);
	assert_null(frames_get(fr, f[2]));
	assert_non_null(frames_get(fr, f[0]));
	assert_trie_is_live_paths(w);
	/* Second 5 leaves: the whole trie goes, the root stays. */
	assert_total_at(w, 15 * SEC, 0);
	assert_int_equal(window_live_nodes(w), 0);
	assert_int_equal(frames_live(fr), 0);
	assert_non_null(window_node(w, WINDOW_ROOT));
	window_free_fx(w);
}

/* Freed ids are handed out again: a window whose stacks never repeat
 * stays as big as what it holds; a frame someone else holds survives. */
static void test_ids_reused(void **state)
{
	struct window *w;
	struct frames *fr;
	size_t peak = 0;

	assert_int_equal(window_new_fx(10, SEC, &w), 0);
	fr = window_frames_mut(w);
	uint32_t keep = fn(w, 1, 0x1, "m", "main", NULL, 0);
	frames_ref(fr, keep);
	for (unsigned s = 0; s < 1000; s++) {
		for (unsigned k = 0; k < 10; k++) {
			/* main → one of 4 new pcs → a pc new every sample */
			uint32_t st[3] = {keep, fn(w, 1, 0x100 + (s + k) % 4, "m", "mid", NULL, 0),
					  fn(w, 1, 0x10000 + s * 10 + k, "m", "leaf", NULL, 0)};
			assert_int_equal(window_add(w, s * SEC + k, (int)k % 3, st, 3, 1), 0);
		}
		if (window_nnodes(w) > peak)
			peak = window_nnodes(w);
	}
	/* 10 s of 10 stacks of <= 3 nodes each, plus the bucket being
	 * filled: nowhere near the 10000 stacks seen. */
	assert_true(peak <= 1 + 11 * 10 * 3);
	assert_true(frames_span(fr) <= 11 * 10 * 3);
	assert_trie_is_live_paths(w);
	window_advance(w, 2000 * SEC);
	assert_int_equal(window_live_nodes(w), 0);
	assert_int_equal(frames_live(fr), 1); /* the one held here */
	assert_non_null(frames_get(fr, keep));
	frames_unref(fr, keep);
	assert_int_equal(frames_live(fr), 0);
	window_free_fx(w);
}

/* R: every node but the root goes, with the frames only the trie held. */
static void test_reset_frees(void **state)
{
	uint32_t f[3];
	struct window *w = window_m(60, f, (const char *[]){"a", "b", "c"}, 3);
	struct frames *fr = window_frames_mut(w);

	frames_ref(fr, f[0]);
	uint32_t ab[] = {f[0], f[1]}, ac[] = {f[0], f[2]};
	assert_int_equal(window_add(w, SEC, 1, ab, 2, 1), 0);
	assert_int_equal(window_add(w, SEC, 1, ac, 2, 1), 0);
	assert_int_equal(window_live_nodes(w), 3);
	assert_int_equal(frames_live(fr), 3);
	window_reset(w);
	assert_int_equal(window_live_nodes(w), 0);
	assert_int_equal(frames_live(fr), 1); /* a, held here */
	assert_null(window_node(w, 1));
	/* And it counts again from nothing, reusing ids. */
	ab[1] = fn(w, 1, 0x20, "m", "b", NULL, 0);
	assert_int_equal(window_add(w, 2 * SEC, 1, ab, 2, 3), 0);
	assert_int_equal(window_live_nodes(w), 2);
	assert_int_equal(window_total(w), 3);
	assert_trie_is_live_paths(w);
	frames_unref(fr, f[0]);
	window_free_fx(w);
}

/* One line per live count: "tid count frame,frame,..." (root first). */
static char **counts_text(const struct window *w, size_t *n)
{
	const struct window_count *c = window_counts(w, n);
	char **out = calloc(*n + 1, sizeof(*out));

	assert_non_null(out);
	for (size_t k = 0; k < *n; k++) {
		uint32_t path[64];
		size_t d = 0, len = 0;
		char *s = malloc(1024);

		assert_non_null(s);
		for (uint32_t id = c[k].node; id != WINDOW_ROOT; id = window_node(w, id)->parent)
			path[d++] = window_node(w, id)->frame;
		len +=
		    (size_t)snprintf(s, 1024, "%d %llu ", c[k].tid, (unsigned long long)c[k].count);
		while (d)
			len += (size_t)snprintf(s + len, 1024 - len, "%u,", path[--d]);
		out[k] = s;
	}
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* After a long churn of ever-new stacks (ids freed and reused many times),
 * the window answers as a fresh window given only the samples still in
 * it: the same counts by path, the same top-N, the same trie size. */
static void test_reuse_matches_fresh(void **state)
{
	enum { NSEC = 300, PER = 20, NPC = 30, MAXD = 6 };
	static struct {
		uint64_t t;
		int tid, d;
		uint64_t pc[MAXD];
	} smp[NSEC * PER];
	static char names[NPC][8];
	struct window *w, *w2;
	struct frames *fr;
	unsigned x = 777;
	size_t ns = 0, peak = 0;

	assert_int_equal(window_new_fx(10, SEC, &w), 0);
	fr = window_frames_mut(w);
	for (int i = 0; i < NPC; i++)
		snprintf(names[i], sizeof(names[i]), "g%d", i);
	for (unsigned s = 0; s < NSEC; s++)
		for (unsigned k = 0; k < PER; k++, ns++) {
			uint32_t st[MAXD];

			x = x * 1103515245u + 12345u;
			smp[ns].t = s * SEC + k * (SEC / PER);
			smp[ns].tid = 1 + (int)(x >> 28) % 3;
			smp[ns].d = 1 + (int)((x >> 20) % MAXD);
			for (int d = 0; d < smp[ns].d; d++) {
				x = x * 1103515245u + 12345u;
				smp[ns].pc[d] = 1 + (x >> 16) % NPC;
				/* interned per sample, as ingest does */
				st[d] =
				    fn(w, 1, smp[ns].pc[d], "m", names[smp[ns].pc[d] - 1], NULL, 0);
			}
			assert_int_equal(
			    window_add(w, smp[ns].t, smp[ns].tid, st, (size_t)smp[ns].d, 1 + k % 2),
			    0);
			if (window_nnodes(w) > peak)
				peak = window_nnodes(w);
		}
	/* The stacks that are left: the last 10 s, into a fresh window on the
	 * same frames table (so frame ids compare). */
	assert_int_equal(window_new(10, SEC, fr, &w2), 0);
	for (size_t i = 0; i < ns; i++) {
		uint32_t st[MAXD];

		if (smp[i].t / SEC + 10 <= NSEC - 1)
			continue;
		for (int d = 0; d < smp[i].d; d++)
			st[d] = fn(w, 1, smp[i].pc[d], "m", names[smp[i].pc[d] - 1], NULL, 0);
		assert_int_equal(
		    window_add(w2, smp[i].t, smp[i].tid, st, (size_t)smp[i].d, 1 + (i % PER) % 2),
		    0);
	}
	assert_int_equal(window_total(w), window_total(w2));
	assert_int_equal(window_live_nodes(w), window_live_nodes(w2));
	assert_trie_is_live_paths(w);
	assert_true(peak < ns / 4); /* ids were reused, not grown per sample */

	size_t n1, n2;
	char **c1 = counts_text(w, &n1), **c2 = counts_text(w2, &n2);
	assert_int_equal(n1, n2);
	qsort(c1, n1, sizeof(*c1), cmp_str);
	qsort(c2, n2, sizeof(*c2), cmp_str);
	for (size_t k = 0; k < n1; k++) {
		assert_string_equal(c1[k], c2[k]);
		free(c1[k]);
		free(c2[k]);
	}
	free(c1);
	free(c2);

	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION};
	struct window_top_row *r1, *r2;
	uint64_t t1, t2;
	assert_int_equal(window_top(w, &q, &r1, &n1, &t1), 0);
	assert_int_equal(window_top(w2, &q, &r2, &n2, &t2), 0);
	assert_int_equal(n1, n2);
	assert_int_equal(t1, t2);
	for (size_t k = 0; k < n2; k++) {
		const struct frame *f2 = frames_get(fr, r2[k].frame);
		const struct window_top_row *m = find_row(w, r1, n1, f2->sym.func, 0);

		assert_non_null(m);
		assert_int_equal(m->self, r2[k].self);
		assert_int_equal(m->total, r2[k].total);
	}
	free(r1);
	free(r2);
	window_free(w2);
	window_free_fx(w);
}

/* The whole machine: stacks under process root frames. A query for one
 * pid sees its stacks only; by_process keeps the same function of two
 * processes apart; the root frames are never rows. */
static void test_process_roots(void **state)
{
	struct window *w = *state;
	struct window_top_row *rows;
	size_t n, i;
	int64_t pa, pb;

	pa = frames_process(window_frames_mut(w), 100, "alpha");
	pb = frames_process(window_frames_mut(w), 200, "beta");
	assert_true(pa >= 0 && pb >= 0 && pa != pb);
	assert_int_equal(frames_process(window_frames_mut(w), 100, "alpha"), pa);
	assert_string_equal(frames_get(window_frames(w), (uint32_t)pa)->sym.func, "alpha (100)");
	assert_int_equal(frames_get(window_frames(w), (uint32_t)pa)->pid, 100);
	uint32_t shared_a = fn(w, 100, 0x10, "libc", "memcpy", NULL, 0);
	uint32_t shared_b = fn(w, 200, 0x10, "libc", "memcpy", NULL, 0);
	uint32_t own = fn(w, 200, 0x20, "beta", "work", NULL, 0);
	uint32_t sa[] = {(uint32_t)pa, shared_a}, sb[] = {(uint32_t)pb, own, shared_b};

	assert_int_equal(window_add(w, SEC, 101, sa, 2, 3), 0);
	assert_int_equal(window_add(w, SEC, 201, sb, 3, 5), 0);

	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION, .pid = 200};
	n = top_expect(w, &q, &rows, 2, 5); /* work, memcpy: no root row */
	assert_int_equal(find_row(w, rows, n, "memcpy", 0)->self, 5);
	assert_null(find_row(w, rows, n, "beta (200)", 0));
	free(rows);

	q = (struct window_top_query){.key = WINDOW_KEY_FUNCTION, .by_process = true};
	n = top_expect(w, &q, &rows, 3, 8); /* memcpy of 100, memcpy of 200, work of 200 */
	for (i = 0; i < n; i++) {
		const char *f = frames_get(window_frames(w), rows[i].frame)->sym.func;
		if (strcmp(f, "work") == 0)
			assert_int_equal(rows[i].pid, 200);
		else
			assert_int_equal(rows[i].self, rows[i].pid == 100 ? 3 : 5);
	}
	free(rows);

	q = (struct window_top_query){.key = WINDOW_KEY_FUNCTION};
	n = top_rows(w, &q, &rows, 2); /* memcpy of both, work */
	const struct window_top_row *both = find_row(w, rows, n, "memcpy", 0);
	assert_int_equal(both->self, 8);
	assert_int_equal(both->pid, 0);
	free(rows);
}

/* Only some seconds: the stacks counted in those buckets alone. */
static void test_top_seconds(void **state)
{
	struct window *w = *state;
	struct window_top_row *rows;
	size_t n;
	uint64_t total;

	uint32_t a = fn(w, 1, 0x10, "m", "poll", NULL, 0), b = fn(w, 1, 0x20, "m", "work", NULL, 0);
	assert_int_equal(window_add(w, 10 * SEC, 2, &a, 1, 4), 0);
	assert_int_equal(window_add(w, 11 * SEC + 5, 2, &b, 1, 7), 0);
	assert_int_equal(window_add(w, 12 * SEC, 2, &a, 1, 3), 0);
	uint64_t secs[] = {10, 12};
	struct window_top_query q = {.key = WINDOW_KEY_FUNCTION, .seconds = secs, .nseconds = 2};
	n = top_expect(w, &q, &rows, 1, 7);
	assert_int_equal(find_row(w, rows, n, "poll", 0)->self, 7);
	free(rows);
	uint64_t one[] = {11};
	q.seconds = one;
	q.nseconds = 1;
	assert_int_equal(window_top(w, &q, &rows, &n, &total), 0);
	assert_int_equal(total, 7);
	assert_non_null(find_row(w, rows, n, "work", 0));
	free(rows);
}

TEST_MAIN(NULL, NULL, TEST_WINDOW(test_intern), TEST(test_expire), TEST(test_big_gap_and_span),
	  TEST(test_reset_and_tids), TEST_WINDOW(test_top_recursion),
	  TEST_WINDOW(test_top_kernel_and_lines), TEST(test_many_stacks),
	  TEST(test_random_reference), TEST_WINDOW(test_gc_counts), TEST_WINDOW(test_wait_frames),
	  TEST(test_free_on_expire), TEST(test_ids_reused), TEST(test_reset_frees),
	  TEST(test_reuse_matches_fresh), TEST_WINDOW(test_process_roots),
	  TEST_WINDOW(test_top_seconds))
