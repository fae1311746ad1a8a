/*
 * window_fixture — a window with a frames table of its own, for the unit
 * tests of the modules that read windows. The table has no sym: frames
 * are named with frames_preset, frames_named or frames_wait.
 */
#ifndef STACKTOP_TEST_WINDOW_FIXTURE_H
#define STACKTOP_TEST_WINDOW_FIXTURE_H

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

/* The window, then its frames table. */
static inline void window_free_fx(struct window *w)
{
	struct frames *fr = w ? window_frames_mut(w) : NULL;

	window_free(w);
	frames_free(fr);
}

#endif
