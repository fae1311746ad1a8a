/*
 * health — rates and the header's warning, measured per refresh (see
 * health.h).
 */
#include "stacktop/app/health.h"

#include <string.h>

void health_init(struct health *h, uint64_t now_ns)
{
	memset(h, 0, sizeof(*h));
	h->last_ns = now_ns;
}

void health_busy(struct health *h, uint64_t ns)
{
	h->busy_ns += ns;
}

static enum view_warning pick(struct health *h, const struct health_input *in, bool behind)
{
	if (h->short_count >= 3)
		return VIEW_WARNING_SAMPLING_BEHIND;
	if (h->lost_recent && h->lost_recent * 100 >= h->delivered_recent + h->lost_recent)
		return VIEW_WARNING_LOST;
	if (behind)
		return VIEW_WARNING_BUSY;
	if (in->tracer > 0)
		return VIEW_WARNING_TRACED;
	if (in->kernel_denied && in->first)
		return VIEW_WARNING_KERNEL_HIDDEN;
	return VIEW_WARNING_NONE;
}

void health_measure(struct health *h, const struct health_input *in, uint64_t now_ns)
{
	bool behind = false;
	double busy_frac = 0;
	double dt = (now_ns - h->last_ns) / 1e9;
	if (dt > 0.05) {
		h->achieved_hz = (in->samples - h->samples_at) / dt;
		h->lost_recent = in->lost - h->lost_at;
		h->delivered_recent = in->samples - h->samples_at;
		/* The first span holds start-up (the first symbol tables,
		 * the first unwinds): a cost paid once says nothing about
		 * keeping up. */
		behind = !in->first && h->busy_ns > (now_ns - h->last_ns) / 2;
		busy_frac = (double)h->busy_ns / (double)(now_ns - h->last_ns);
		h->samples_at = in->samples;
		h->lost_at = in->lost;
		h->last_ns = now_ns;
		h->busy_ns = 0;
	}
	/* Fewer samples than the CPU the process burned: we are missing some. */
	if (in->expected_hz > 20 && h->achieved_hz < 0.6 * in->expected_hz)
		h->short_count++;
	else
		h->short_count = 0;
	/* The cause decides the advice: a sure one first. */
	if (in->kernel_denied)
		h->cause = VIEW_BEHIND_KERNEL;
	else if (in->misses_short_threads)
		h->cause = VIEW_BEHIND_SHORT_THREADS;
	else if (busy_frac > 0.25)
		h->cause = VIEW_BEHIND_SLOW;
	else
		h->cause = VIEW_BEHIND_UNKNOWN;
	h->expected_hz = in->expected_hz;
	h->span_s = dt;
	h->tracer = in->tracer;
	h->warning = pick(h, in, behind);
}
