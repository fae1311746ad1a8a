/*
 * growfile — a file read as it grows (see growfile.h).
 */
#include <errno.h>
#include <string.h>

#include "stacktop/lib/fdread.h"
#include "stacktop/lib/growfile.h"

void growfile_pace_tune(struct growfile_pace *p, uint64_t recheck_ns, size_t chunk)
{
	struct growfile_pace d = GROWFILE_PACE_DEFAULT;

	p->recheck_ns = recheck_ns;
	p->chunk = chunk ? chunk : d.chunk;
	p->budget_ns = chunk ? 0 : d.budget_ns;
}

bool growfile_due(struct growfile *g, uint64_t now, const struct growfile_pace *p, bool soon)
{
	if (g->checked_ns && now - g->checked_ns < (soon ? p->recheck_ns / 10 : p->recheck_ns))
		return false;
	g->checked_ns = now;
	return true;
}

void growfile_restart(struct growfile *g)
{
	g->done = 0;
	g->chk_len = 0;
}

bool growfile_same(const struct growfile *g, const struct stat *st)
{
	return st->st_dev == g->dev && st->st_ino == g->ino && st->st_size == g->size &&
	       st->st_mtim.tv_sec == g->mtime.tv_sec && st->st_mtim.tv_nsec == g->mtime.tv_nsec;
}

bool growfile_appended(const struct growfile *g, int fd, const struct stat *st)
{
	char now[GROWFILE_TAILCHK];

	if (st->st_dev != g->dev || st->st_ino != g->ino || st->st_size < g->done)
		return false;
	if (g->chk_len == 0)
		return g->done == 0;
	return fdread_at(fd, now, g->chk_len, g->done - (off_t)g->chk_len) == (ssize_t)g->chk_len &&
	       !memcmp(now, g->chk, g->chk_len);
}

void growfile_seen(struct growfile *g, const struct stat *st)
{
	g->dev = st->st_dev;
	g->ino = st->st_ino;
	g->size = st->st_size;
	g->mtime = st->st_mtim;
}

int growfile_advance(struct growfile *g, int fd, size_t n)
{
	g->done += (off_t)n;
	g->chk_len = g->done < GROWFILE_TAILCHK ? (size_t)g->done : GROWFILE_TAILCHK;
	if (fdread_at(fd, g->chk, g->chk_len, g->done - (off_t)g->chk_len) != (ssize_t)g->chk_len)
		return -EIO;
	return 0;
}
