/*
 * window_fixture — a window with a frames table of its own, for the unit
 * tests of the modules that read windows. The table has no sym: frames
 * are named with frames_preset, frames_named or frames_wait.
 */
#ifndef STACKTOP_TEST_WINDOW_FIXTURE_H
#define STACKTOP_TEST_WINDOW_FIXTURE_H

#include "stacktop/frames.h"
#include "stacktop/window.h"

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

/* The window, then its frames table. */
static inline void window_free_fx(struct window *w)
{
	struct frames *fr = w ? window_frames_mut(w) : NULL;

	window_free(w);
	frames_free(fr);
}

#endif
