/*
 * sampler — the wrappers every caller uses instead of reaching into a
 * struct sampler_ops (see sampler.h). Optional operations left NULL by an
 * implementation do nothing here, so callers never test which source they
 * have.
 *
 * File descriptors: a sampler holds some per thread (perf: an event; wall:
 * four /proc files), and the rest of stacktop needs some too (binaries
 * opened to unwind and name frames, /proc files for the series). So a new
 * thread is refused with -EMFILE while fewer than SAMPLER_FD_RESERVE
 * descriptors are left under RLIMIT_NOFILE: such a thread is counted and
 * shown as not sampled, and what is sampled still unwinds.
 */
#include "stacktop/sample/sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define SAMPLER_FD_RESERVE 24

const char *sampler_mode(const struct sampler *s)
{
	return s->ops->mode;
}

/* Fewer than SAMPLER_FD_RESERVE descriptors left? The lowest free one
 * (what open returns) tells, as descriptors are handed out lowest first. */
bool sampler_fds_low(void)
{
	struct rlimit rl;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	fd = open("/", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE;
	close(fd);
	return (rlim_t)fd + SAMPLER_FD_RESERVE >= rl.rlim_cur;
}

int sampler_add_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	int err;

	if (s->ops->add_thread && sampler_fds_low())
		err = -EMFILE;
	else
		err = s->ops->add_thread ? s->ops->add_thread(s, pid, tid) : 0;
	if (err && err != -EEXIST && err != -ESRCH)
		s->last_err = err;
	return err;
}

bool sampler_has_thread(const struct sampler *s, pid_t tid)
{
	return s->ops->has_thread && s->ops->has_thread(s, tid);
}

int sampler_nthreads(const struct sampler *s)
{
	return s->ops->nthreads ? s->ops->nthreads(s) : 0;
}

int sampler_collect(struct sampler *s, uint64_t now_ns, const struct sampler_sink *sink)
{
	return s->stopped ? 0 : s->ops->collect(s, now_ns, sink);
}

void sampler_on_child(struct sampler *s)
{
	if (s->ops->on_child && !s->stopped)
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

void sampler_pump(struct sampler *s)
{
	if (s->ops->pump && !s->stopped)
		s->ops->pump(s);
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
	out->threads_failed_err = s->last_err;
}

void sampler_explain(const struct sampler *s, int err, pid_t pid, char *buf, size_t size)
{
	if (s->ops->explain)
		s->ops->explain(s, err, pid, buf, size);
	else
		snprintf(buf, size, "cannot sample process %d: %s.", pid, strerror(-err));
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
