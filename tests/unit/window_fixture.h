/*
 * window_fixture — a window with a frames table of its own, for the unit
 * tests of the modules that read windows. The table has no sym: frames
 * are named with frames_preset, frames_named or frames_wait.
 */
#ifndef STACKTOP_TEST_WINDOW_FIXTURE_H
#define STACKTOP_TEST_WINDOW_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/symbols/frames.h"
#include "stacktop/model/window.h"

static inline int window_new_fx(unsigned seconds, uint64_t bucket_ns, struct window **out)
{
	struct frames *fr;
	int err = frames_new(NULL, &fr);

	if (err)
		return err;
	if ((err = window_new(seconds, bucket_ns, fr, out)))
		frames_free(fr);
	return err;
}

/* A frame of pid 42 at pc named by si (with its line when si->file is
 * set), as a symbolizer would have made it. Include after cmocka.h. */
static inline uint32_t window_fx_frame(struct window *w, uint64_t pc, const struct sym_info *si)
{
	int64_t id = frames_preset(window_frames_mut(w), 42, pc, si->kernel, si, si->file != NULL);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* A row of a fixture's frames table: where, and the names a symbolizer
 * would have given it. */
struct window_fx_row {
	uint64_t pc;
	bool kernel;
	const char *module, *func, *file;
	int line;
};

/* The row as a frame, every pc offset bytes into its function. */
static inline uint32_t window_fx_row(struct window *w, const struct window_fx_row *r,
				     uint64_t offset)
{
	return window_fx_frame(w, r->pc,
			       &(struct sym_info){.func = r->func,
						  .module = r->module,
						  .file = r->file,
						  .line = r->line,
						  .kernel = r->kernel,
						  .offset = offset});
}

#define WINDOW_FX_DEPTH 8

/* A stack of a fixture: count samples of thread tid at time t, its frames
 * rows of the table (root first). */
struct window_fx_stack {
	uint64_t t;
	int tid;
	uint32_t count;
	int depth;
	int row[WINDOW_FX_DEPTH];
};

/* A window of 60 one-second buckets holding the rows (made frames in
 * their order, with offset) and the stacks. */
static inline struct window *window_fx_table(const struct window_fx_row *rows, size_t nrows,
					     uint64_t offset, const struct window_fx_stack *stacks,
					     size_t nstacks)
{
	uint32_t id[nrows], fr[WINDOW_FX_DEPTH];
	struct window *w;

	assert_int_equal(window_new_fx(60, 1000000000ull, &w), 0);
	for (size_t i = 0; i < nrows; i++)
		id[i] = window_fx_row(w, &rows[i], offset);
	for (size_t i = 0; i < nstacks; i++) {
		const struct window_fx_stack *s = &stacks[i];

		assert_true(s->depth <= WINDOW_FX_DEPTH);
		for (int d = 0; d < s->depth; d++)
			fr[d] = id[s->row[d]];
		assert_int_equal(window_add(w, s->t, s->tid, fr, (size_t)s->depth, s->count), 0);
	}
	return w;
}

/* window_fx_table of two arrays. */
#define WINDOW_FX_TABLE(rows, offset, stacks)                                                      \
	window_fx_table((rows), sizeof(rows) / sizeof((rows)[0]), (offset), (stacks),              \
			sizeof(stacks) / sizeof((stacks)[0]))

/* The window, then its frames table. */
static inline void window_free_fx(struct window *w)
{
	struct frames *fr = w ? window_frames_mut(w) : NULL;

	window_free(w);
	frames_free(fr);
}

/* A 60 s window of 1 s buckets as a test's state, freed after the test
 * (passed or not): TEST_WINDOW(test_x) in the TEST_MAIN list, and
 * struct window *w = *state in the test. */
static inline int window_fx_setup(void **state)
{
	struct window *w;

	if (window_new_fx(60, 1000000000ull, &w) != 0)
		return -1;
	*state = w;
	return 0;
}

static inline int window_fx_teardown(void **state)
{
	window_free_fx(*state);
	return 0;
}

#define TEST_WINDOW(test) cmocka_unit_test_setup_teardown(test, window_fx_setup, window_fx_teardown)

#endif
