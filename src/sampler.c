/*
 * sampler — the wrappers of the one sampler interface (see sampler.h).
 *
 * Each wrapper calls the implementation's op; optional ops (NULL) get the
 * neutral answer: no threads, nothing collected, no tick preference,
 * -EOPNOTSUPP for adding a thread. sampler_stop runs the op once;
 * sampler_free stops first, so a target is never left as the sampler had
 * it, whatever path frees it.
 */
#include "stacktop/sampler.h"

#include <errno.h>
#include <string.h>

const char *sampler_mode(const struct sampler *s)
{
	return s->ops->mode;
}

int sampler_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	return s->ops->add_thread ? s->ops->add_thread(s, pid, tid) : -EOPNOTSUPP;
}

bool sampler_has_thread(const struct sampler *s, pid_t tid)
{
	return s->ops->has_thread ? s->ops->has_thread(s, tid) : false;
}

int sampler_nthreads(const struct sampler *s)
{
	return s->ops->nthreads ? s->ops->nthreads(s) : 0;
}

int sampler_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	if (s->stopped || !s->ops->collect)
		return 0;
	return s->ops->collect(s, now_ns, sink);
}

void sampler_on_child(struct sampler *s)
{
	if (s->ops->on_child)
		s->ops->on_child(s);
}

int sampler_launch_prepare(struct sampler *s, pid_t pid)
{
	return s->ops->launch_prepare ? s->ops->launch_prepare(s, pid) : 0;
}

void sampler_launch_done(struct sampler *s)
{
	if (s->ops->launch_done)
		s->ops->launch_done(s);
}

uint64_t sampler_tick_ns(const struct sampler *s)
{
	return s->ops->tick_ns ? s->ops->tick_ns(s) : 0;
}

void sampler_stats(const struct sampler *s, struct sampler_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (s->ops->stats)
		s->ops->stats(s, out);
}

void sampler_stop(struct sampler *s)
{
	if (s->stopped)
		return;
	if (s->ops->stop)
		s->ops->stop(s);
	s->stopped = true;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	s->ops->free(s);
}
