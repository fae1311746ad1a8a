/* Unit tests for annotate (the per-address aggregation of a function's own
 * samples, finding a function by name, counts into lines) and view_annotate
 * (the rendered grid, compared as text; its keys). Set VIEW_ANNOTATE_DUMP=1
 * to print the rendered grids. */
#include <errno.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runner.h"

#include "fixture.h"

#include "stacktop/model/annotate.h"
#include "stacktop/ui/keys.h"
#include "stacktop/symbols/sym.h"
#include "stacktop/ui/view_annotate.h"

#define SEC FIXTURE_SEC

struct fixture {
	struct window *w;
	struct view_annotate_state st;
	struct grid g;
	/* hot (pid 4242 at 0x1000 and pid 4243 at 0x5000), cold, its caller */
	uint32_t main_, hot10, hot20, hot20_inl, hot30, other10, cold, khot, wait;
};

/* A frame of pid at pc in func (starting at start, size 0x40). */
static uint32_t mk(struct window *w, int pid, uint64_t pc, bool kernel, const char *func,
		   uint64_t start, bool inlined)
{
	struct sym_info si = {.func = func,
			      .module = kernel ? "[kernel]" : "prog",
			      .func_start = start,
			      .func_size = 0x40,
			      .offset = pc - start,
			      .kernel = kernel,
			      .inlined = inlined};
	int64_t id;

	if (inlined) /* a distinct frame at the same pc: another (pid, pc) key */
		id = frames_preset(window_frames_mut(w), pid, pc | (1ull << 62), false, &si, true);
	else
		id = frames_preset(window_frames_mut(w), pid, pc, kernel, &si, false);
	assert_true(id >= 0);
	frames_ref(window_frames_mut(w), (uint32_t)id);
	return (uint32_t)id;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	int64_t wt;

	if (fixture_open(fx, 60, &fx->w))
		return -1;
	fx->main_ = mk(fx->w, 4242, 0x900, false, "main", 0x900, false);
	fx->hot10 = mk(fx->w, 4242, 0x1010, false, "hot", 0x1000, false);
	fx->hot20 = mk(fx->w, 4242, 0x1020, false, "hot", 0x1000, false);
	fx->hot20_inl = mk(fx->w, 4242, 0x1020, false, "helper", 0, true);
	fx->hot30 = mk(fx->w, 4242, 0x1030, false, "hot", 0x1000, false);
	fx->other10 = mk(fx->w, 4243, 0x5010, false, "hot", 0x5000, false);
	fx->cold = mk(fx->w, 4242, 0x2004, false, "cold_hotter", 0x2000, false);
	fx->khot =
	    mk(fx->w, 4242, 0xffffffff81000010ull, true, "hot", 0xffffffff81000000ull, false);
	wt = frames_wait(window_frames_mut(fx->w), SAMPLE_WAIT_LOCK);
	assert_true(wt >= 0);
	fx->wait = (uint32_t)wt;
	/* hot's own samples: 0x10: 50 + 10 (waiting there) + 20 (pid 4243);
	 * 0x20: 5 + 15 (in the inlined helper); 0x30: 0 (only a caller). */
	fixture_add(fx->w, 30, 1, 50, 2, fx->main_, fx->hot10);
	fixture_add(fx->w, 30, 1, 10, 3, fx->main_, fx->hot10, fx->wait);
	fixture_add(fx->w, 30, 2, 20, 2, fx->main_, fx->other10);
	fixture_add(fx->w, 30, 1, 5, 2, fx->main_, fx->hot20);
	fixture_add(fx->w, 30, 1, 15, 3, fx->main_, fx->hot20, fx->hot20_inl);
	fixture_add(fx->w, 30, 1, 7, 3, fx->main_, fx->hot30, fx->cold);
	fixture_add(fx->w, 30, 1, 3, 2, fx->main_, fx->khot);
	return fixture_ready(state, fx, &fx->g);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->st.open = false; /* its annotate was built by hand */
	free(fx->st.a.lines);
	return fixture_close(fx, fx->w, &fx->g);
}

static void test_count_per_address(void **state)
{
	struct fixture *fx = *state;
	struct annotate_match m = {.module = "prog", .func = "hot"};
	struct annotate_addr *a;
	size_t n;

	assert_int_equal(annotate_count(fx->w, &m, &a, &n), 0);
	/* Wait frames and inlined levels at the leaf count for the function
	 * under them; a caller's pc (0x30) and the kernel's "hot" do not. */
	assert_int_equal(n, 2);
	assert_int_equal(a[0].off, 0x10);
	assert_int_equal(a[0].count, 80);
	assert_int_equal(a[1].off, 0x20);
	assert_int_equal(a[1].count, 20);
	assert_int_equal(m.self, 100);
	/* The hottest instance: pid 4242 (80 samples) over 4243 (20). */
	assert_int_equal(m.pid, 4242);
	assert_int_equal(m.func_start, 0x1000);
	assert_int_equal(m.func_size, 0x40);
	free(a);

	/* The kernel's function of the same name is another function. */
	struct annotate_match k = {.module = "[kernel]", .func = "hot", .kernel = true};
	assert_int_equal(annotate_count(fx->w, &k, &a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(k.self, 3);
	free(a);

	/* One process only (the whole machine narrowed to 4243). */
	struct annotate_match one = {.module = "prog", .func = "hot", .only_pid = 4243};
	assert_int_equal(annotate_count(fx->w, &one, &a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].count, 20);
	assert_int_equal(one.self, 20);
	assert_int_equal(one.pid, 4243);
	assert_int_equal(one.func_start, 0x5000);
	free(a);

	/* After the samples age out: nothing. */
	window_advance(fx->w, 200 * SEC);
	assert_int_equal(annotate_count(fx->w, &m, &a, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(m.self, 0);
	free(a);
}

static void test_find_by_name(void **state)
{
	struct fixture *fx = *state;
	struct annotate_match m;
	char others[200];
	int nm;

	/* Exact first: "hot" is user hot (100) and kernel hot (3). */
	assert_int_equal(annotate_find(fx->w, "hot", &m, &nm, others, sizeof(others)), 0);
	assert_int_equal(nm, 2);
	assert_string_equal(m.func, "hot");
	assert_false(m.kernel);
	assert_string_equal(others, "hot ([kernel])");
	/* Containing: "cold_hotter" only (no exact "ld_h"). */
	assert_int_equal(annotate_find(fx->w, "ld_h", &m, &nm, NULL, 0), 0);
	assert_int_equal(nm, 1);
	assert_string_equal(m.func, "cold_hotter");
	/* main is never a leaf: no samples of its own. */
	assert_int_equal(annotate_find(fx->w, "main", &m, &nm, NULL, 0), -ENOENT);
	assert_int_equal(annotate_find_addr(fx->w, 4242, 0x2000, &m), 0);
	assert_string_equal(m.func, "cold_hotter");
	assert_int_equal(annotate_find_addr(fx->w, 4242, 0x2004, &m), -ENOENT);
}

/* hot's code as annotate_open would line it up: source line 10 over the
 * first two instructions, a marker over the call. */
static void build_lines(struct fixture *fx)
{
	static const struct annotate_line lines[] = {
	    {.kind = ANNOTATE_SRC,
	     .addr = 0x1000,
	     .line = 10,
	     .text = "   10: for (i = 0; i < n; i++)"},
	    {.kind = ANNOTATE_INSN, .addr = 0x1000, .text = "add rcx, 1"},
	    {.kind = ANNOTATE_INSN, .addr = 0x1010, .text = "imul rdx, r10"},
	    {.kind = ANNOTATE_MARK, .addr = 0x1020, .line = 12, .text = "x.c:12  [inlined helper]"},
	    {.kind = ANNOTATE_INSN, .addr = 0x1020, .text = "xor rdx, r8"},
	    {.kind = ANNOTATE_INSN,
	     .addr = 0x1030,
	     .call = true,
	     .target = 0x2000,
	     .text = "call 0x2000  <cold_hotter>"},
	};
	struct annotate *a = &fx->st.a;

	memset(&fx->st, 0, sizeof(fx->st));
	a->m = (struct annotate_match){.module = "prog", .func = "hot", .pid = 4242};
	a->m.func_start = 0x1000;
	a->m.func_size = 0x40;
	a->base = 0x1000; /* counts are offsets from the start */
	a->lines = malloc(sizeof(lines));
	memcpy(a->lines, lines, sizeof(lines));
	a->n = sizeof(lines) / sizeof(lines[0]);
	a->ninsn = 4;
	fx->st.open = true;
	assert_int_equal(annotate_update(a, fx->w), 0);
}

static void test_update_counts_lines(void **state)
{
	struct fixture *fx = *state;
	const struct annotate_line *l;

	build_lines(fx);
	l = fx->st.a.lines;
	assert_int_equal(fx->st.a.total, 100);
	assert_int_equal(l[1].count, 0);
	assert_int_equal(l[2].count, 80);
	assert_int_equal(l[4].count, 20);
	assert_int_equal(l[5].count, 0);
	/* A source line sums the instructions under it. */
	assert_int_equal(l[0].count, 80);
	assert_int_equal(l[3].count, 20);
}

static void render(struct fixture *fx, int w, int h)
{
	assert_int_equal(grid_resize(&fx->g, w, h), 0);
	fx->st.page = h - 4;
	view_annotate_render(&fx->st, &fx->g);
	fixture_dump(&fx->g, "VIEW_ANNOTATE_DUMP");
}

static void test_render_modes(void **state)
{
	struct fixture *fx = *state;
	uint64_t target = 0;

	build_lines(fx);
	render(fx, 70, 10);
	assert_rows(fx, 0, "annotate hot  prog  pid 4242  100 samples  [mixed]",
		    "   PCT            ADDR  INSTRUCTION", "           10: for (i = 0; i < n; i++)",
		    "                0x1000  add rcx, 1", " 80.0%          0x1010  imul rdx, r10",
		    "        x.c:12  [inlined helper]", " 20.0%          0x1020  xor rdx, r8",
		    "                0x1030  call 0x2000  <cold_hotter>", "");
	/* The hottest instruction stands out; the selection is reversed. */
	assert_true(row_has_attr(fx, 4, GRID_BOLD));
	assert_true(row_has_attr(fx, 2, GRID_REVERSE));
	assert_false(row_has_attr(fx, 3, GRID_REVERSE));
	assert_string_equal(
	    row(fx, 9), "Esc back  a source/mixed/instructions  Enter call: callee  Up/Down/PgU");

	/* a: instructions only; Enter on the call asks to follow it. */
	assert_int_equal(view_annotate_key(&fx->st, 'a', &target), VIEW_ANNOTATE_USED);
	render(fx, 70, 10);
	assert_rows(fx, 0, "annotate hot  prog  pid 4242  100 samples  [instructions only]",
		    "   PCT            ADDR  INSTRUCTION", "                0x1000  add rcx, 1");
	assert_int_equal(view_annotate_key(&fx->st, KEYS_ENTER, &target), VIEW_ANNOTATE_USED);
	assert_int_equal(view_annotate_key(&fx->st, KEYS_END, &target), VIEW_ANNOTATE_USED);
	assert_int_equal(view_annotate_key(&fx->st, KEYS_ENTER, &target), VIEW_ANNOTATE_FOLLOW);
	assert_int_equal(target, 0x2000);

	/* a: source only, each line with its instructions' share. */
	assert_int_equal(view_annotate_key(&fx->st, 'a', &target), VIEW_ANNOTATE_USED);
	render(fx, 70, 10);
	assert_rows(fx, 0, "annotate hot  prog  pid 4242  100 samples  [source only]",
		    "   PCT  SOURCE", " 80.0%     10: for (i = 0; i < n; i++)",
		    " 20.0%  x.c:12  [inlined helper]", "");
	/* a: mixed again; Esc closes. */
	assert_int_equal(view_annotate_key(&fx->st, 'a', &target), VIEW_ANNOTATE_USED);
	assert_int_equal(fx->st.mode, VIEW_ANNOTATE_MIXED);
	assert_int_equal(view_annotate_key(&fx->st, KEYS_ESC, &target), VIEW_ANNOTATE_CLOSE);
	assert_int_equal(view_annotate_key(&fx->st, 'x', &target), VIEW_ANNOTATE_NONE);
}

static void test_render_batch_all_lines(void **state)
{
	struct fixture *fx = *state;

	build_lines(fx);
	fx->st.batch = true;
	assert_int_equal(view_annotate_count(&fx->st), 6);
	render(fx, 70, 6 + 2);
	/* Every line, no footer, no selection. */
	assert_string_equal(row(fx, 7), "                0x1030  call 0x2000  <cold_hotter>");
	assert_false(row_has_attr(fx, 2, GRID_REVERSE));
}

/* Opening by name says which of several matches it took; a function
 * without samples of its own is a sentence, not a view. */
static void test_open_says_which(void **state)
{
	struct fixture *fx = *state;
	struct view_annotate_state st = {0};
	char msg[300] = "";

	assert_int_equal(view_annotate_open_name(&st, fx->w, NULL, NULL, "hot", msg, sizeof(msg)),
			 0);
	assert_true(st.open);
	assert_string_equal(st.which,
			    "hot (prog): the hottest of 2 functions matching 'hot'; also: "
			    "hot ([kernel])");
	assert_int_equal(st.a.total, 100);
	/* No sym (a saved profile): no code, and the view says why. */
	assert_int_equal(st.a.n, 0);
	assert_string_equal(st.a.note,
			    "no live process, and the profile kept no addresses: no code to read.");
	view_annotate_close(&st);
	assert_false(st.open);

	assert_int_equal(
	    view_annotate_open_name(&st, fx->w, NULL, NULL, "ma\x1bin", msg, sizeof(msg)), -ENOENT);
	assert_string_equal(msg, "no function named 'ma?in' has samples of its own yet");
	assert_int_equal(view_annotate_open_frame(&st, fx->w, NULL, NULL,
						  frames_get(window_frames(fx->w), fx->main_), msg,
						  sizeof(msg)),
			 -ENOENT);
	assert_string_equal(msg,
			    "main has no samples of its own in the window: nothing to annotate");
	assert_false(st.open);
}

TEST_MAIN(NULL, NULL, TEST_FX(test_open_says_which), TEST_FX(test_count_per_address),
	  TEST_FX(test_find_by_name), TEST_FX(test_update_counts_lines), TEST_FX(test_render_modes),
	  TEST_FX(test_render_batch_all_lines))
