/*
 * health — is stacktop keeping up? Measured once per refresh from counters
 * (samples delivered, records lost, time spent processing, the CPU the
 * process burned), it gives the achieved sample rate and the one most
 * pressing warning for the header, as an enum with its numbers: the words
 * are the view's (view_warning_text), so the TUI and batch say the same.
 *
 * Order of warnings: sampling behind (three refreshes in a row under 60% of
 * the samples the CPU time calls for), records lost, stacktop busy over half
 * its time (never on the first refresh: its span holds start-up), the target traced by someone
 * else, kernel frames denied (first refresh only). Records lost under 1% of the samples are not
 * worth a warning (they stay counted on line 2). Sampling behind names its cause: kernel time not
 * visible, threads too short for per-task events, or stacktop too slow (only then is "lower --rate"
 * the advice).
 */
#ifndef STACKTOP_HEALTH_H
#define STACKTOP_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include "stacktop/ui/view.h"

/* What one refresh reads. */
struct health_input {
	uint64_t samples;   /* delivered since start */
	uint64_t lost;	    /* lost since start */
	double expected_hz; /* samples/s the burned CPU calls for; 0: unknown */
	int tracer;	    /* another process tracing the target, 0: none */
	bool kernel_denied;
	/* per-task or per-thread events: threads that exit within a period
	 * or before they are found are not sampled */
	bool misses_short_threads;
	bool first; /* the first scheduled refresh: start-up notes are shown */
};

struct health {
	uint64_t samples_at, lost_at, last_ns;
	uint64_t busy_ns; /* time spent collecting since the last refresh */
	double achieved_hz;
	uint64_t lost_recent, delivered_recent; /* over the last interval */
	int short_count;
	enum view_warning warning;
	enum view_behind_cause cause; /* SAMPLING_BEHIND: why */
	double expected_hz, span_s;
	int tracer;
};

void health_init(struct health *h, uint64_t now_ns);
/* Time spent collecting samples, to tell whether stacktop keeps up. */
void health_busy(struct health *h, uint64_t ns);
void health_measure(struct health *h, const struct health_input *in, uint64_t now_ns);

#endif
