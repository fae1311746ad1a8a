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
#include "stacktop/lib/mono.h"
#include "stacktop/proc/tfile.h"
#include "stacktop/symbols/perfmap.h"

#define PERFMAP_RECHECK_NS 1000000000ull

struct pm_ent {
	uint64_t start, end;
	uint32_t name;
	uint32_t seq; /* line number: later lines win on overlap */
};

/* One perf map file, keyed by (root, pid). */
struct perfmap {
	struct perfmap *next;
	char *root;
	pid_t pid;	/* key: host pid, or the namespace pid for perfmap_lookup_at */
	bool from_proc; /* nspid/uid are re-read from /proc/PID/status */
	pid_t nspid;
	uid_t uid;
	uint64_t checked_ns;
	bool loaded; /* a trusted file was read */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct pm_ent *ents;
	size_t n;
	char *names;
};

struct perfmap_cache {
	struct perfmap *maps;
	/* anonymous executable code met with no trusted perf map: the
	 * namespace pid its /tmp/perf-PID.map would have (0: none) */
	pid_t jit_nomap_nspid;
	pid_t missing; /* set by perfmap_lookup: the map's nspid, 0: loaded */
};

int perfmap_cache_new(struct perfmap_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void perfmap_clear(struct perfmap *pm)
{
	free(pm->ents);
	free(pm->names);
	pm->ents = NULL;
	pm->names = NULL;
	pm->n = 0;
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

/* The file's bytes, at most TFILE_PERFMAP_MAX of them, up to its last
 * newline (a JIT may be writing a line right now), NUL-terminated. */
static int perfmap_slurp(int fd, char **out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, *nl;

	for (;;) {
		ssize_t r;

		if (len >= TFILE_PERFMAP_MAX) {
			free(buf);
			tfile_count(TFILE_R_TOO_BIG);
			return -EFBIG;
		}
		if (array_grow((void **)&buf, &cap, len + 65536 + 1, 1)) {
			free(buf);
			return -ENOMEM;
		}
		r = pread(fd, buf + len, cap - len - 1, (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -errno;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	nl = len ? memrchr(buf, '\n', len) : NULL;
	len = nl ? (size_t)(nl - buf) + 1 : 0;
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* Parse a whole perf map from an open fd into pm. Bad lines are skipped. */
static int perfmap_read(struct perfmap *pm, int fd)
{
	char *text = NULL, *line, *next, *names = NULL;
	size_t ncap = 0, nlen = 0, ecap = 0;
	struct pm_ent *ents = NULL;
	uint32_t seq = 0;
	int err;

	err = perfmap_slurp(fd, &text);
	if (err)
		return err;
	for (line = text; *line; line = next) {
		uint64_t start, size;
		const char *name;
		size_t len = strcspn(line, "\n");
		uint32_t off;

		next = line + len + (line[len] == '\n');
		line[len] = '\0';
		while (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		seq++;
		if (perfmap_parse_line(line, &start, &size, &name) || !size || start + size < start)
			continue;
		if (array_grow((void **)&ents, &ecap, pm->n + 1, sizeof(*ents))) {
			err = -ENOMEM;
			break;
		}
		err = array_push_name(&names, &nlen, &ncap, name, &off);
		if (err)
			break;
		ents[pm->n++] = (struct pm_ent){start, start + size, off, seq};
	}
	free(text);
	if (err) {
		free(ents);
		free(names);
		pm->n = 0;
		return err;
	}
	if (pm->n)
		qsort(ents, pm->n, sizeof(*ents), pm_cmp);
	pm->ents = ents;
	pm->names = names;
	pm->loaded = true;
	return 0;
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

/* Re-check the file (at most once a second) and re-read it if changed. */
static void perfmap_refresh(struct perfmap *pm)
{
	char rel[64];
	struct stat st;
	uint64_t now = mono_ns();
	int fd;

	if (pm->checked_ns && now - pm->checked_ns < PERFMAP_RECHECK_NS)
		return;
	pm->checked_ns = now;
	if (pm->from_proc && proc_status_ids(pm->pid, &pm->nspid, &pm->uid)) {
		perfmap_clear(pm);
		return;
	}
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", (int)pm->nspid);
	fd = tfile_open_under(pm->root, rel, TFILE_NOFOLLOW, TFILE_PERFMAP_MAX, &st);
	if (fd < 0) {
		perfmap_clear(pm);
		return;
	}
	if (st.st_uid != 0 && st.st_uid != pm->uid) {
		close(fd);
		perfmap_clear(pm);
		return;
	}
	if (pm->loaded && st.st_dev == pm->dev && st.st_ino == pm->ino && st.st_size == pm->size &&
	    st.st_mtim.tv_sec == pm->mtime.tv_sec && st.st_mtim.tv_nsec == pm->mtime.tv_nsec) {
		close(fd);
		return;
	}
	perfmap_clear(pm);
	if (perfmap_read(pm, fd) == 0) {
		pm->dev = st.st_dev;
		pm->ino = st.st_ino;
		pm->size = st.st_size;
		pm->mtime = st.st_mtim;
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

/* The entry holding pc: the latest line among the last 16 starting at or
 * below it (entries may overlap). */
static int perfmap_find(const struct perfmap *pm, uint64_t pc, struct perfmap_sym *out)
{
	const struct pm_ent *best = NULL;
	size_t lo = ARRAY_STARTS_AT_OR_BELOW(pm->ents, pm->n, pc);
	long i;

	for (i = (long)lo - 1; i >= 0 && (long)lo - i <= 16; i--) {
		const struct pm_ent *e = &pm->ents[i];

		if (pc < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return -ENOENT;
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
	perfmap_refresh(pm);
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
	perfmap_refresh(pm);
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
