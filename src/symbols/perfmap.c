/*
 * perfmap — JIT symbols from /tmp/perf-PID.map files (see perfmap.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/lib/array.h"
#include "stacktop/lib/fdread.h"
#include "stacktop/lib/growfile.h"
#include "stacktop/lib/mono.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/symbols/perfmap.h"

struct pm_ent {
	uint64_t start, end;
	uint32_t name;
	uint32_t seq; /* line number: later lines win on overlap */
};

/* Entries sorted by (start, seq). */
struct pm_run {
	struct pm_ent *e;
	size_t n, cap;
};

/* One perf map file, keyed by (root, pid). Its entries are two sorted
 * runs: base, and tail (the lines appended since tail was last merged into
 * base); new lines are sorted among themselves and merged into tail, and
 * tail into base when it reaches a quarter of it, so no check re-sorts the
 * whole map. */
struct perfmap {
	struct perfmap *next;
	char *root;
	pid_t pid;	/* key: host pid, or the namespace pid for perfmap_lookup_at */
	bool from_proc; /* nspid/uid are re-read from /proc/PID/status */
	pid_t nspid;
	uid_t uid;
	bool missed;	   /* a lookup found nothing since: check again sooner */
	bool loaded;	   /* a trusted file was (at least partly) read */
	struct growfile g; /* done: up to the end of a line */
	bool skipping;	   /* inside a line longer than a chunk: drop up to its newline */
	uint32_t seq;
	struct pm_run base, tail;
	char *names;
	size_t nlen, ncap;
};

struct perfmap_cache {
	struct perfmap *maps;
	/* anonymous executable code met with no trusted perf map: the
	 * namespace pid its /tmp/perf-PID.map would have (0: none) */
	pid_t jit_nomap_nspid;
	pid_t missing; /* set by perfmap_lookup: the map's nspid, 0: loaded */
	struct growfile_pace pace;
};

int perfmap_cache_new(struct perfmap_cache **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->pace = GROWFILE_PACE_DEFAULT;
	return 0;
}

void perfmap_cache_tune(struct perfmap_cache *c, uint64_t recheck_ns, size_t chunk)
{
	growfile_pace_tune(&c->pace, recheck_ns, chunk);
}

static void perfmap_clear(struct perfmap *pm)
{
	free(pm->base.e);
	free(pm->tail.e);
	free(pm->names);
	pm->base = (struct pm_run){0};
	pm->tail = (struct pm_run){0};
	pm->names = NULL;
	pm->nlen = pm->ncap = 0;
	growfile_restart(&pm->g);
	pm->skipping = false;
	pm->seq = 0;
	pm->loaded = false;
}

void perfmap_cache_free(struct perfmap_cache *c)
{
	struct perfmap *pm, *next;

	if (!c)
		return;
	for (pm = c->maps; pm; pm = next) {
		next = pm->next;
		perfmap_clear(pm);
		free(pm->root);
		free(pm);
	}
	free(c);
}

int perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name)
{
	const char *p = line;
	char *end;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*start = strtoull(p, &end, 16);
	if (errno || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	*size = strtoull(p, &end, 16);
	if (errno || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n' || *p == '\r')
		return -EINVAL;
	*name = p;
	return 0;
}

static int pm_cmp(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merge b (sorted) into a (sorted), in place from the back: a grows by nb
 * entries, no second copy of it. 0 or -ENOMEM (nothing changed). */
static int run_merge(struct pm_run *a, const struct pm_ent *b, size_t nb)
{
	size_t i = a->n, j = nb, k = a->n + nb;

	if (!nb)
		return 0;
	if (array_grow((void **)&a->e, &a->cap, k, sizeof(*a->e)))
		return -ENOMEM;
	while (j > 0) {
		if (i > 0 && pm_cmp(&a->e[i - 1], &b[j - 1]) > 0)
			a->e[--k] = a->e[--i];
		else
			a->e[--k] = b[--j];
	}
	a->n += nb;
	return 0;
}

/* New entries (any order; sorted here) join the map. */
static int perfmap_add(struct perfmap *pm, struct pm_ent *ents, size_t n)
{
	int err;

	if (!n)
		return 0;
	qsort(ents, n, sizeof(*ents), pm_cmp);
	if ((err = run_merge(&pm->tail, ents, n)))
		return err;
	if (pm->tail.n < 4096 && pm->tail.n * 4 < pm->base.n)
		return 0;
	if ((err = run_merge(&pm->base, pm->tail.e, pm->tail.n)))
		return err;
	pm->tail.n = 0;
	return 0;
}

/* A name as kept: at most PERFMAP_NAME_MAX bytes with the NUL, a longer one
 * cut with "..." (not inside a UTF-8 sequence). */
static int perfmap_name(struct perfmap *pm, const char *name, uint32_t *off)
{
	char buf[PERFMAP_NAME_MAX];
	size_t len = strlen(name), keep;

	if (len >= PERFMAP_NAME_MAX) {
		keep = PERFMAP_NAME_MAX - 4;
		while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
			keep--;
		memcpy(buf, name, keep);
		memcpy(buf + keep, "...", 4);
		name = buf;
	}
	return array_push_name(&pm->names, &pm->nlen, &pm->ncap, name, off);
}

/* Parse the complete lines of text (len bytes, the last one ending in a
 * newline) into the map. Bad lines are skipped. */
static int perfmap_parse(struct perfmap *pm, char *text, size_t len)
{
	struct pm_ent *ents = NULL;
	size_t n = 0, cap = 0;
	char *line = text, *end = text + len, *nl;
	int err = 0;

	for (; line < end; line = nl + 1) {
		uint64_t start, size;
		const char *name;
		size_t l;

		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break;
		l = (size_t)(nl - line);
		*nl = '\0';
		while (l > 0 && line[l - 1] == '\r')
			line[--l] = '\0';
		pm->seq++;
		if (memchr(line, '\0', l) || perfmap_parse_line(line, &start, &size, &name) ||
		    !size || start + size < start)
			continue;
		if (array_grow((void **)&ents, &cap, n + 1, sizeof(*ents))) {
			err = -ENOMEM;
			break;
		}
		ents[n] = (struct pm_ent){start, start + size, 0, pm->seq};
		if ((err = perfmap_name(pm, name, &ents[n].name)))
			break;
		n++;
	}
	if (!err)
		err = perfmap_add(pm, ents, n);
	free(ents);
	return err;
}

/* Parse at most chunk more bytes of the file, from done, up to the last
 * complete line (a JIT may be writing one right now). A line longer than
 * a chunk is skipped. */
static int perfmap_read_more(struct perfmap *pm, int fd, off_t size, size_t chunk)
{
	size_t want = (size_t)(size - pm->g.done), len, skip = 0;
	char *buf, *nl;
	ssize_t r;
	int err;

	if (want > chunk)
		want = chunk;
	if (!want)
		return 0;
	if (!(buf = malloc(want + 1)))
		return -ENOMEM;
	r = fdread_at(fd, buf, want, pm->g.done);
	if (r <= 0) {
		free(buf);
		return r < 0 ? (int)r : 0;
	}
	len = (size_t)r;
	if (pm->skipping) {
		/* the rest of an over-long line: not a line of its own */
		nl = memchr(buf, '\n', len);
		skip = nl ? (size_t)(nl - buf) + 1 : len;
		pm->skipping = !nl;
	}
	nl = skip < len ? memrchr(buf + skip, '\n', len - skip) : NULL;
	if (!nl) {
		/* no newline in a whole chunk: a line longer than any we keep */
		if (!skip && len == chunk) {
			pm->skipping = true;
			skip = len;
		}
		free(buf);
		return skip ? growfile_advance(&pm->g, fd, skip) : 0;
	}
	len = (size_t)(nl - buf) + 1;
	err = perfmap_parse(pm, buf + skip, len - skip);
	free(buf);
	return err ? err : growfile_advance(&pm->g, fd, len);
}

/* NSpid (last value) and effective uid of a live process. */
static int proc_status_ids(pid_t pid, pid_t *nspid, uid_t *uid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool got_ns = false, got_uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;
			long v;

			for (;;) {
				v = strtol(p, &end, 10);
				if (end == p)
					break;
				*nspid = (pid_t)v;
				got_ns = true;
				p = end;
			}
		} else if (!strncmp(line, "Uid:", 4)) {
			unsigned r, e;

			if (sscanf(line + 4, "%u %u", &r, &e) == 2) {
				*uid = e;
				got_uid = true;
			}
		}
	}
	free(line);
	fclose(f);
	if (!got_ns)
		*nspid = pid; /* kernels before 4.1 have no NSpid */
	return got_uid ? 0 : -EINVAL;
}

/* Re-check the file (at most once a second) and read what is new: the
 * lines appended since the last check when the file only grew, else the
 * whole file again; either way a chunk (8 MiB) at a time for at most
 * budget_ns. */
static void perfmap_refresh(struct perfmap *pm, const struct perfmap_cache *c)
{
	char rel[64];
	struct stat st;
	uint64_t now = mono_ns();
	int fd;

	/* A miss may be code the JIT has just announced, and a file read in
	 * part has more to come: a tenth of the interval then, so a new
	 * function is not left unnamed for good. */
	bool soon = pm->missed || (pm->loaded && pm->g.done < pm->g.size);

	if (!growfile_due(&pm->g, now, &c->pace, soon))
		return;
	pm->missed = false;
	if (pm->from_proc && proc_status_ids(pm->pid, &pm->nspid, &pm->uid)) {
		perfmap_clear(pm);
		return;
	}
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", (int)pm->nspid);
	/* never through a FUSE or network mount of the process (a lookup
	 * there may wait for good, and the target may be the daemon) */
	fd = tfile_open_owned(pm->root, rel, pm->uid, TFILE_PERFMAP_MAX, &st);
	if (fd < 0) {
		perfmap_clear(pm);
		return;
	}
	if (pm->loaded && growfile_same(&pm->g, &st) && pm->g.done >= st.st_size) {
		close(fd);
		return;
	}
	/* Same size, new mtime, all of it parsed: rewritten in place. */
	if (!pm->loaded || !growfile_appended(&pm->g, fd, &st) ||
	    (st.st_size == pm->g.size && pm->g.done >= st.st_size))
		perfmap_clear(pm);
	pm->loaded = true;
	growfile_seen(&pm->g, &st);
	/* Chunks until caught up or the pace's budget spent: a large map is
	 * read over a few checks (~40 ms an 8 MiB chunk here), not in one
	 * stall, yet without waiting for a lookup between every chunk (checks
	 * come with new pcs, about once a second). */
	for (;;) {
		off_t before = pm->g.done;

		if (perfmap_read_more(pm, fd, st.st_size, c->pace.chunk)) {
			perfmap_clear(pm); /* read again whole at the next check */
			break;
		}
		/* caught up, or only a line being written is left */
		if (pm->g.done >= pm->g.size || pm->g.done == before ||
		    mono_ns() - now >= c->pace.budget_ns)
			break;
	}
	close(fd);
}

static struct perfmap *perfmap_get(struct perfmap_cache *c, const char *root, pid_t pid)
{
	struct perfmap *pm;

	for (pm = c->maps; pm; pm = pm->next) {
		if (pm->pid == pid && !strcmp(pm->root, root))
			return pm;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->root = strdup(root);
	if (!pm->root) {
		free(pm);
		return NULL;
	}
	pm->pid = pid;
	pm->next = c->maps;
	c->maps = pm;
	return pm;
}

/* The latest entry of run r holding pc, or best: among the last 16
 * starting at or below it (entries may overlap). */
static const struct pm_ent *run_find(const struct pm_run *r, uint64_t pc, const struct pm_ent *best)
{
	size_t lo = r->n ? ARRAY_STARTS_AT_OR_BELOW(r->e, r->n, pc) : 0;
	long i;

	for (i = (long)lo - 1; i >= 0 && (long)lo - i <= 16; i--) {
		const struct pm_ent *e = &r->e[i];

		if (pc < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

static int perfmap_find(struct perfmap *pm, uint64_t pc, struct perfmap_sym *out)
{
	const struct pm_ent *best = run_find(&pm->tail, pc, run_find(&pm->base, pc, NULL));

	if (!best) {
		pm->missed = true;
		return -ENOENT;
	}
	out->name = pm->names + best->name;
	out->start = best->start;
	out->end = best->end;
	return 0;
}

int perfmap_lookup_at(struct perfmap_cache *c, const char *root, pid_t nspid, uid_t uid,
		      uint64_t pc, struct perfmap_sym *out)
{
	struct perfmap *pm = perfmap_get(c, root ? root : "", nspid);

	if (!pm)
		return -ENOMEM;
	pm->nspid = nspid;
	pm->uid = uid;
	perfmap_refresh(pm, c);
	return perfmap_find(pm, pc, out);
}

int perfmap_lookup(struct perfmap_cache *c, pid_t pid, uint64_t pc, struct perfmap_sym *out)
{
	char root[64];
	struct perfmap *pm;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	pm = perfmap_get(c, root, pid);
	if (!pm)
		return -ENOMEM;
	pm->from_proc = true;
	perfmap_refresh(pm, c);
	c->missing = pm->loaded ? 0 : (pm->nspid ? pm->nspid : pid);
	if (pm->loaded && c->jit_nomap_nspid == pm->nspid)
		c->jit_nomap_nspid = 0; /* the map came: the hint is done */
	return perfmap_find(pm, pc, out);
}

void perfmap_note_unnamed(struct perfmap_cache *c)
{
	if (c->missing)
		c->jit_nomap_nspid = c->missing;
}

pid_t perfmap_jit_nomap(const struct perfmap_cache *c)
{
	return c->jit_nomap_nspid;
}
