/*
 * report_window — for the report fuzzers: load a profile into a frames
 * table of its own and replay it through the report's sampler into a
 * fresh window, as main does. A failure to add a delivered sample aborts
 * (the report handed out frame ids the window refuses).
 */
#ifndef STACKTOP_FUZZ_REPORT_WINDOW_H
#define STACKTOP_FUZZ_REPORT_WINDOW_H

#include <stdlib.h>

#include "stacktop/formats/export.h"
#include "stacktop/symbols/frames.h"
#include "stacktop/formats/report.h"
#include "stacktop/formats/stackset.h"
#include "stacktop/sample/sampler.h"
#include "stacktop/model/window.h"

static void report_window_sample(void *ctx, const struct sample *s)
{
	if (!s->frame_ids || s->nframe_ids <= 0 ||
	    window_add(ctx, s->time_ns, s->tid, s->frame_ids, (size_t)s->nframe_ids, s->weight))
		abort();
}

/* 0 with *fr, *w and *r set; 1 when out of memory before loading; or
 * report_load_mem's error (then *r is NULL, *w and *fr still to free). */
static int report_window(const void *data, size_t len, const char *name, struct frames **fr,
			 struct window **w, struct stackset **r, char *err, size_t errsz)
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

static void report_window_free(struct frames *fr, struct window *w, struct stackset *r)
{
	window_free(w);
	stackset_free(r);
	frames_free(fr);
}

/* report_window on the fuzzer's input, checking what every report fuzzer
 * holds (else abort): a failure says why and returns nothing; a success
 * counts exactly stackset_samples() samples, at least one, all of named
 * frames. 0: loaded (free with report_window_free); 1: nothing loaded
 * (failed or out of memory), nothing left to free. */
static int report_window_checked(const void *data, size_t len, struct frames **fr,
				 struct window **w, struct stackset **r)
{
	char err[512] = "";
	int rc = report_window(data, len, "fuzz", fr, w, r, err, sizeof(err));

	if (rc == 1)
		return 1;
	if (rc) {
		if (*r || !err[0])
			abort(); /* a failure says why and returns nothing */
		report_window_free(*fr, *w, *r);
		return 1;
	}
	if (window_total(*w) != stackset_samples(*r) || stackset_samples(*r) == 0)
		abort();
	for (size_t i = 0; i < frames_span(*fr); i++)
		if (!frames_get(*fr, (uint32_t)i)->has_sym ||
		    !frames_get(*fr, (uint32_t)i)->sym.func)
			abort();
	return 0;
}

/* Export what was loaded as o says, threads named as the report names
 * them. 0 with *buf (free it), or export_render's error. */
static int report_window_export(struct window *w, struct stackset *r, struct export_opts o,
				char **buf, size_t *len)
{
	char err[512];

	o.thread_name = stackset_thread_name;
	o.ctx = r;
	return export_render(w, &o, buf, len, err, sizeof(err));
}

/* What was loaded, exported per thread in format and loaded again, must
 * hold the same total (else abort). Checked only below 2^31 samples: lines
 * that merge on export may pass 2^32 and be scaled on reload. */
static inline void report_window_roundtrip(struct window *w, struct stackset *r,
					   enum export_format format)
{
	struct window *w2;
	struct stackset *r2;
	struct frames *fr2;
	char err[512], *buf;
	size_t len;
	int rc;

	if (stackset_samples(r) >= (1ull << 31) ||
	    report_window_export(w, r, (struct export_opts){.format = format, .per_thread = true},
				 &buf, &len))
		return;
	if ((rc = report_window(buf, len, "again", &fr2, &w2, &r2, err, sizeof(err))) != 1) {
		if (rc != 0 || window_total(w2) != window_total(w))
			abort(); /* our own output must read back whole */
		report_window_free(fr2, w2, r2);
	}
	free(buf);
}

/* The whole body of a fuzzer for a text format that exports back to itself:
 * load and check the input, then round-trip it through format. */
static inline int report_window_fuzz_roundtrip(const void *data, size_t len,
					       enum export_format format)
{
	struct window *w;
	struct stackset *r;
	struct frames *fr;

	if (report_window_checked(data, len, &fr, &w, &r))
		return 0;
	report_window_roundtrip(w, r, format);
	report_window_free(fr, w, r);
	return 0;
}

#endif
