/*
 * hsperf — a JVM's heap figures from its hsperfdata file (see hsperf.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacktop/lib/fdread.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/runtime/hsperf.h"

#define PROLOGUE 32u
#define ENTRY 20u
#define NAME_MAX_LEN 256u

struct reader {
	const uint8_t *b;
	size_t len;
	bool big; /* the file's byte order */
};

static uint32_t rd32(const struct reader *r, size_t off)
{
	const uint8_t *p = r->b + off;

	return r->big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		      : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint64_t rd64(const struct reader *r, size_t off)
{
	uint64_t hi = rd32(r, off + (r->big ? 0 : 4)), lo = rd32(r, off + (r->big ? 4 : 0));

	return hi << 32 | lo;
}

/* Does name match pat, where '#' in pat stands for one or more digits? */
static bool name_is(const char *name, const char *pat)
{
	while (*pat) {
		if (*pat == '#') {
			if (!isdigit((unsigned char)*name))
				return false;
			while (isdigit((unsigned char)*name))
				name++;
			pat++;
		} else if (*name++ != *pat++) {
			return false;
		}
	}
	return !*name;
}

struct counters {
	uint64_t used, committed, count, ticks, freq;
	bool heap;
};

static void take(struct counters *c, const char *name, uint64_t v)
{
	if (name_is(name, "sun.gc.generation.#.space.#.used")) {
		c->used += v;
		c->heap = true;
	} else if (name_is(name, "sun.gc.generation.#.capacity")) {
		c->committed += v;
	} else if (!strcmp(name, "sun.gc.collector.0.invocations") ||
		   !strcmp(name, "sun.gc.collector.1.invocations")) {
		c->count += v;
	} else if (!strcmp(name, "sun.gc.collector.0.time") ||
		   !strcmp(name, "sun.gc.collector.1.time")) {
		c->ticks += v;
	} else if (!strcmp(name, "sun.os.hrt.frequency")) {
		c->freq = v;
	}
}

/* One entry at off: its name and, for a scalar long ('J'), its value. */
static int entry(const struct reader *r, size_t off, size_t *next, struct counters *c)
{
	uint32_t elen, noff, vlen, doff;
	char name[NAME_MAX_LEN];
	size_t nlen;

	if (off + ENTRY > r->len)
		return -EINVAL;
	elen = rd32(r, off);
	noff = rd32(r, off + 4);
	vlen = rd32(r, off + 8);
	doff = rd32(r, off + 16);
	if (elen < ENTRY || elen > r->len - off || noff < ENTRY || noff >= elen)
		return -EINVAL;
	*next = off + elen;
	nlen = strnlen((const char *)r->b + off + noff, elen - noff);
	if (nlen == elen - noff || nlen >= sizeof(name))
		return 0; /* no NUL inside the entry, or a name we never want */
	memcpy(name, r->b + off + noff, nlen + 1);
	if (r->b[off + 12] != 'J' || vlen != 0 || doff < ENTRY || doff > elen || elen - doff < 8)
		return 0;
	take(c, name, rd64(r, off + doff));
	return 0;
}

int hsperf_parse(const void *buf, size_t len, struct hsperf *out)
{
	struct reader r = {buf, len, false};
	struct counters c = {0};
	uint32_t first, n, i;
	size_t off;
	int err;

	if (len < PROLOGUE)
		return -EINVAL;
	r.big = true; /* the magic is always big-endian */
	if (rd32(&r, 0) != HSPERF_MAGIC || r.b[4] > 1 || r.b[5] != 2)
		return -EINVAL;
	r.big = r.b[4] == 0;
	if (!r.b[7])
		return -EAGAIN;
	first = rd32(&r, 24);
	n = rd32(&r, 28);
	if (first < PROLOGUE || first > len || n > len / ENTRY)
		return -EINVAL;
	for (i = 0, off = first; i < n; i++)
		if ((err = entry(&r, off, &off, &c)))
			return err;
	if (!c.heap)
		return -ENOENT;
	*out = (struct hsperf){
	    .heap_used = c.used,
	    .heap_committed = c.committed,
	    .gc_count = c.count,
	    .gc_time_s = c.freq ? (double)c.ticks / (double)c.freq : 0,
	};
	return 0;
}

int hsperf_path_in_maps(const char *maps, char *path, size_t size)
{
	const char *line = maps;
	int found = -ENOENT;

	while (line && *line) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *p = memchr(line, '/', (size_t)(end - line)), *base, *dir;

		if (p) {
			size_t l = (size_t)(end - p);

			base = p + l;
			while (base > p && base[-1] != '/')
				base--;
			dir = base - 1;
			while (dir > p && dir[-1] != '/')
				dir--;
			if (base < end && strspn(base, "0123456789") == (size_t)(end - base) &&
			    !strncmp(dir, "hsperfdata_", 11) && l < size) {
				memcpy(path, p, l);
				path[l] = '\0';
				found = 0;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return found;
}

int hsperf_read_at(const char *root, const char *path, uid_t uid, struct hsperf *out)
{
	struct stat st;
	int fd = tfile_open_owned(root, path, uid, HSPERF_MAX, &st), err;
	uint8_t *buf;
	ssize_t r;

	if (fd < 0)
		return fd;
	buf = malloc(HSPERF_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	r = fdread_at(fd, buf, HSPERF_MAX, 0);
	close(fd);
	err = r < 0 ? (int)r : hsperf_parse(buf, (size_t)r, out);
	free(buf);
	return err;
}

int hsperf_read(pid_t pid, struct hsperf *out)
{
	char mpath[64], root[64], path[512];
	struct tfile_cred cred;
	char *maps = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int err;

	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(mpath, "re")))
		return -errno;
	n = getdelim(&maps, &cap, '\0', f);
	fclose(f);
	if (n <= 0) {
		free(maps);
		return -ENOENT;
	}
	err = hsperf_path_in_maps(maps, path, sizeof(path));
	free(maps);
	if (err)
		return err;
	if ((err = tfile_cred_of(pid, &cred)))
		return err;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	return hsperf_read_at(root, path, cred.uid, out);
}
