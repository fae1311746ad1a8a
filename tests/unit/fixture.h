/*
 * fixture.h — what the view tests share: a window filled with fake frames
 * and samples, a header, and reading a rendered grid back as text.
 *
 * Each view test (test_view_top, test_view_threads, test_view_icicle) keeps
 * its own struct fixture with its own frames and samples; the helpers here
 * work on the window, header and grid inside it (fields w, h, st and g;
 * the macros below name them). Include after <cmocka.h>. Static inline, so
 * a test that does not use one pays nothing.
 */
#ifndef STACKTOP_TEST_FIXTURE_H
#define STACKTOP_TEST_FIXTURE_H

#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacktop/ui/grid.h"
#include "stacktop/ui/view.h"
#include "stacktop/model/window.h"
#include "window_fixture.h"

#define FIXTURE_SEC 1000000000ull
#define FIXTURE_PID 4242

/* A frame of pid 4242 at pc, named func in mod (file:line when file is
 * given; offset for a frame with a module but no function). The tests keep
 * the id across expiry and window_reset, which free the trie nodes that
 * hold frames, so the fixture holds a reference of its own (dropped by
 * frames_free). */
static inline uint32_t fixture_frame(struct window *w, uint64_t pc, bool kernel, const char *mod,
				     const char *func, const char *file, int line, uint64_t off)
{
	struct sym_info si = {.func = func,
			      .module = mod,
			      .file = file,
			      .line = line,
			      .offset = off,
			      .kernel = kernel};
	int64_t id =
	    frames_preset(window_frames_mut(w), FIXTURE_PID, pc, kernel, &si, file != NULL);

	assert_true(id >= 0);
	frames_ref(window_frames_mut(w), (uint32_t)id);
	return (uint32_t)id;
}

/* count samples of thread tid at t_s seconds, with the n frames that follow
 * (outermost first). */
static inline void fixture_add(struct window *w, uint64_t t_s, int tid, unsigned count, size_t n,
			       ...)
{
	uint32_t fr[16];
	va_list ap;

	assert_true(n <= 16);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		fr[i] = va_arg(ap, uint32_t);
	va_end(ap);
	assert_int_equal(window_add(w, t_s * FIXTURE_SEC, tid, fr, n, count), 0);
}

/* The header every view test starts from: one cpu-mode process, pid 4242;
 * the test names the rest, e.g. FIXTURE_HEADER(.cmdline = "./x",
 * .nthreads = 1, .window_s = 60, .span_s = 60). */
#define FIXTURE_HEADER(...)                                                                        \
	((struct view_header){.pid = FIXTURE_PID, .npids = 1, .mode = "cpu", __VA_ARGS__})

/* Setup's start: fx allocated (calloc'd by the caller), the C.UTF-8 locale
 * and *w, a window of window_s one-second buckets; -1 (setup fails) when
 * the allocation or the locale failed. */
static inline int fixture_open(void *fx, unsigned window_s, struct window **w)
{
	if (!fx || !setlocale(LC_CTYPE, "C.UTF-8"))
		return -1;
	assert_int_equal(window_new_fx(window_s, FIXTURE_SEC, w), 0);
	return 0;
}

/* Setup's end: an 80x24 grid g, and fx as the test's state. */
static inline int fixture_ready(void **state, void *fx, struct grid *g)
{
	assert_int_equal(grid_init(g, 80, 24), 0);
	*state = fx;
	return 0;
}

/* Teardown's end (the view's state freed first): the grid, the window
 * and fx. */
static inline int fixture_close(void *fx, struct window *w, struct grid *g)
{
	grid_free(g);
	window_free_fx(w);
	free(fx);
	return 0;
}

/* The teardown of a test whose struct fixture holds nothing else to free:
 * state_free(&fx->st), then fixture_close. */
#define FIXTURE_TEARDOWN(state_free)                                                               \
	static int teardown(void **state)                                                          \
	{                                                                                          \
		struct fixture *fx = *state;                                                       \
                                                                                                   \
		state_free(&fx->st);                                                               \
		return fixture_close(fx, fx->w, &fx->g);                                           \
	}

/* Row y of g as text (one of 8 rotating buffers, so a few can be compared
 * in one assertion). */
static inline const char *fixture_row(const struct grid *g, int y)
{
	static char buf[8][4096];
	static int k;
	char *b = buf[k++ % 8];

	assert_true(grid_row_text(g, y, b, 4096) >= 0);
	return b;
}

/* In fixture_assert_rows' list: a row not checked. */
static const char fixture_any_row[] = "(any row)";
#define ANY_ROW fixture_any_row

/* Rows y0, y0 + 1, ... of g read as the NULL-terminated texts want
 * (ANY_ROW: that row is not checked). */
static inline void fixture_assert_rows(const struct grid *g, int y0, const char *const *want)
{
	for (int y = y0; *want; y++, want++)
		if (*want != fixture_any_row)
			assert_string_equal(fixture_row(g, y), *want);
}

/* Rows from..to (inclusive) are blank. */
static inline void fixture_assert_blank(const struct grid *g, int from, int to)
{
	for (int y = from; y <= to; y++)
		assert_string_equal(fixture_row(g, y), "");
}

/* Some cell of row y has attribute bit. */
static inline bool fixture_row_has_attr(struct grid *g, int y, uint16_t bit)
{
	for (int x = 0; x < g->w; x++)
		if (grid_at(g, x, y)->attr & bit)
			return true;
	return false;
}

/* Resize fx's grid to w x h, update the view's state and render it (the
 * two calls given, each returning 0), print it under env (fixture_dump). */
#define fixture_render(fx, w, h, update, render, env)                                              \
	do {                                                                                       \
		assert_int_equal(grid_resize(&(fx)->g, w, h), 0);                                  \
		assert_int_equal(update, 0);                                                       \
		assert_int_equal(render, 0);                                                       \
		fixture_dump(&(fx)->g, env);                                                       \
	} while (0)

/* The same on a test's struct fixture fx (its grid g). */
#define row(fx, y) fixture_row(&(fx)->g, y)
#define assert_blank(fx, from, to) fixture_assert_blank(&(fx)->g, from, to)
/* assert_rows(fx, y0, "row y0", "row y0 + 1", ...) */
#define assert_rows(fx, y0, ...)                                                                   \
	fixture_assert_rows(&(fx)->g, y0, (const char *const[]){__VA_ARGS__, NULL})
#define row_has_attr(fx, y, bit) fixture_row_has_attr(&(fx)->g, y, bit)

/* With the environment variable env set, print the grid (for writing the
 * expected text of a new test). */
static inline void fixture_dump(const struct grid *g, const char *env)
{
	if (!getenv(env))
		return;
	printf("---- %dx%d\n", g->w, g->h);
	for (int y = 0; y < g->h; y++)
		printf("|%s\n", fixture_row(g, y));
}

/* Both first and then stand in text, first before then; returns where then
 * starts (to look further from there). */
static inline const char *fixture_in_order(const char *text, const char *first, const char *then)
{
	const char *a = strstr(text, first), *b = strstr(text, then);

	assert_non_null(a);
	assert_non_null(b);
	assert_true(a < b);
	return b;
}

#endif
