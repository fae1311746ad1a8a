/*
 * report_window — for the report fuzzers: load a profile into a frames
 * table of its own and replay it through the report's sampler into a
 * fresh window, as main does. A failure to add a delivered sample aborts
 * (the report handed out frame ids the window refuses).
 */
#ifndef STACKTOP_FUZZ_REPORT_WINDOW_H
#define STACKTOP_FUZZ_REPORT_WINDOW_H

#include <stdlib.h>

#include "stacktop/frames.h"
#include "stacktop/report.h"
#include "stacktop/sampler.h"
#include "stacktop/window.h"

static void report_window_sample(void *ctx, const struct sample *s)
{
	if (!s->frame_ids || s->nframe_ids <= 0 ||
	    window_add(ctx, s->time_ns, s->tid, s->frame_ids, (size_t)s->nframe_ids, s->weight))
		abort();
}

/* 0 with *fr, *w and *r set; 1 when out of memory before loading; or
 * report_load_mem's error (then *r is NULL, *w and *fr still to free). */
static int report_window(const void *data, size_t len, const char *name, struct frames **fr,
			 struct window **w, struct report **r, char *err, size_t errsz)
{
	struct sampler_sink sink = {.sample = report_window_sample};
	struct sampler *s;
	int rc;

	*r = NULL;
	*w = NULL;
	if (frames_new(NULL, fr))
		return 1;
	if (window_new(60, 1000000000ull, *fr, w)) {
		frames_free(*fr);
		return 1;
	}
	if ((rc = report_load_mem(data, len, name, *fr, r, err, errsz)))
		return rc;
	if (report_sampler_new(*r, &s))
		abort();
	sink.ctx = *w;
	sampler_collect(s, REPORT_TIME_NS, &sink);
	sampler_free(s);
	return 0;
}

static void report_window_free(struct frames *fr, struct window *w, struct report *r)
{
	window_free(w);
	report_free(r);
	frames_free(fr);
}

#endif
