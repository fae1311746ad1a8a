/*
 * memmap — mappings that grow, from /proc/PID/smaps (see memmap.h).
 *
 * smaps is a header line per mapping
 *   7f1c2a000000-7f1c2a400000 rw-p 00000000 00:00 0      [path]
 * followed by "Key:   N kB" lines (Rss, Anonymous, ...) and VmFlags. We
 * keep Rss and Anonymous of each mapping and add them into the mapping's
 * row; the row's history is a ring of MEMMAP_HIST snapshots indexed like
 * memmap.times_ns. The path is everything after the inode column; it is
 * target text (a file name may hold any byte but '/' and NUL, newlines
 * included: a name with a newline splits into a line that is not smaps and
 * is skipped and counted).
 */
#include "stacktop/memory/memmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacktop/lib/mono.h"

static const char *const kind_names[MEMMAP_KIND_COUNT] = {"heap", "anon",  "stack",
							  "file", "shmem", "other"};

const char *memmap_kind_name(enum memmap_kind k)
{
	return k >= 0 && k < MEMMAP_KIND_COUNT ? kind_names[k] : "other";
}

bool memmap_kind_anon(enum memmap_kind k)
{
	return k == MEMMAP_HEAP || k == MEMMAP_ANON || k == MEMMAP_STACK;
}

void memmap_init(struct memmap *m, pid_t pid, uint64_t min_interval_ns)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->min_interval_ns = min_interval_ns;
	m->interval_ns = min_interval_ns;
}

void memmap_free(struct memmap *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->rows[i].name);
	free(m->rows);
	free(m->ranges);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

/* The kind of a mapping from its path and whether it is shared. */
static enum memmap_kind classify(const char *path, bool shared)
{
	static const char *const shm[] = {"/dev/shm/", "/memfd:", "/SYSV", "/dev/zero"};
	if (!*path)
		return shared ? MEMMAP_SHMEM : MEMMAP_ANON;
	if (!strcmp(path, "[heap]"))
		return MEMMAP_HEAP;
	if (!strcmp(path, "[stack]"))
		return MEMMAP_STACK;
	for (size_t i = 0; i < sizeof(shm) / sizeof(shm[0]); i++)
		if (!strncmp(path, shm[i], strlen(shm[i])))
			return MEMMAP_SHMEM;
	return path[0] == '[' ? MEMMAP_OTHER : MEMMAP_FILE;
}

/* The row for (kind, name), added with zeros in every slot if new; -1 when
 * out of memory. Past MEMMAP_ROWS_MAX rows, new names go to one "other"
 * row of their kind. Linear search: rows are few (anonymous mappings share
 * one) and a snapshot is taken at most once a second. */
static int row_of(struct memmap *m, enum memmap_kind kind, const char *name)
{
	if (kind == MEMMAP_ANON)
		name = "anonymous";
	else if (kind == MEMMAP_SHMEM && !*name)
		name = "shared anonymous";
	if (m->n >= MEMMAP_ROWS_MAX)
		name = "(more mappings)";
	for (int i = 0; i < m->n; i++)
		if (m->rows[i].kind == kind && !strcmp(m->rows[i].name, name))
			return i;
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 32;
		void *p = realloc(m->rows, (size_t)cap * sizeof(*m->rows));
		if (!p)
			return -1;
		m->rows = p;
		m->cap = cap;
	}
	struct memmap_row *r = &m->rows[m->n];
	memset(r, 0, sizeof(*r));
	if (!(r->name = strdup(name)))
		return -1;
	r->kind = kind;
	return m->n++;
}

/* A mapping header: "start-end perms offset dev inode   path". Fills
 * shared and path (pointing into line, up to len); false if not one. */
static bool parse_header(const char *line, size_t len, bool *shared, const char **path,
			 size_t *pathlen, uint64_t *range)
{
	char perms[8];
	unsigned long long start, end, off, inode;
	unsigned maj, min;
	int pos = 0;
	char tmp[160];
	size_t n = len < sizeof(tmp) - 1 ? len : sizeof(tmp) - 1;
	memcpy(tmp, line, n);
	tmp[n] = '\0';
	if (sscanf(tmp, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &off, &maj, &min,
		   &inode, &pos) != 7 ||
	    strlen(perms) != 4 || end < start)
		return false;
	size_t p = (size_t)pos;
	while (p < len && line[p] == ' ')
		p++;
	*shared = perms[3] == 's';
	range[0] = start;
	range[1] = end;
	*path = line + p;
	*pathlen = len - p;
	return true;
}

/* No real size comes near 4 PiB; a larger number is clamped so that sums
 * and differences stay far inside int64_t. */
#define KB_MAX (1ull << 42)

static void add_kb(uint64_t *sum, uint64_t kb)
{
	*sum = *sum + kb > KB_MAX ? KB_MAX : *sum + kb;
}

/* "Key:   N kB": the value of key, or false. */
static bool field_kb(const char *line, size_t len, const char *key, uint64_t *kb)
{
	size_t k = strlen(key);
	if (len <= k || memcmp(line, key, k) != 0)
		return false;
	uint64_t v = 0;
	size_t i = k;
	while (i < len && line[i] == ' ')
		i++;
	if (i == len || line[i] < '0' || line[i] > '9')
		return false;
	for (; i < len && line[i] >= '0' && line[i] <= '9'; i++)
		v = v > KB_MAX ? v : v * 10 + (uint64_t)(line[i] - '0');
	*kb = v > KB_MAX ? KB_MAX : v;
	return true;
}

/* Keep the mapping's range; smaps lists them in address order, anything
 * else (a hostile or broken text) is dropped so the list stays sorted. */
static int add_range(struct memmap *m, const uint64_t *range)
{
	if (m->nranges && range[0] < m->ranges[m->nranges - 1][1])
		return 0;
	if (m->nranges == m->rcap) {
		size_t cap = m->rcap ? m->rcap * 2 : 256;
		void *p = realloc(m->ranges, cap * sizeof(*m->ranges));
		if (!p)
			return -ENOMEM;
		m->ranges = p;
		m->rcap = cap;
	}
	m->ranges[m->nranges][0] = range[0];
	m->ranges[m->nranges++][1] = range[1];
	return 0;
}

int memmap_parse(struct memmap *m, const char *text, size_t len, uint64_t now_ns)
{
	int slot = m->head, cur = -1;
	char name[4096];
	for (int i = 0; i < m->n; i++) {
		m->rows[i].rss_kb[slot] = 0;
		m->rows[i].nmaps = 0;
		m->rows[i].anon_kb = 0;
	}
	m->nmappings = m->nanon = 0;
	m->nranges = 0;
	for (size_t pos = 0; pos < len;) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		pos += ll + 1;
		const char *path;
		size_t pl;
		bool shared;
		uint64_t kb;
		if (ll && line[0] >= 'A' && line[0] <= 'Z') {
			/* A field of the current mapping. */
			if (cur >= 0 && field_kb(line, ll, "Rss:", &kb))
				add_kb(&m->rows[cur].rss_kb[slot], kb);
			else if (cur >= 0 && field_kb(line, ll, "Anonymous:", &kb))
				add_kb(&m->rows[cur].anon_kb, kb);
			continue;
		}
		if (!ll)
			continue;
		uint64_t range[2];
		if (!parse_header(line, ll, &shared, &path, &pl, range)) {
			m->parse_errors++;
			cur = -1;
			continue;
		}
		if (pl >= sizeof(name))
			pl = sizeof(name) - 1;
		memcpy(name, path, pl);
		name[pl] = '\0';
		enum memmap_kind kind = classify(name, shared);
		if ((cur = row_of(m, kind, name)) < 0)
			return -ENOMEM;
		m->rows[cur].nmaps++;
		m->nmappings++;
		if (add_range(m, range) < 0)
			return -ENOMEM;
		m->nanon += kind == MEMMAP_ANON;
	}
	m->times_ns[slot] = now_ns;
	m->head = (slot + 1) % MEMMAP_HIST;
	m->nsnap++;
	return 0;
}

/* /proc/PID/smaps into m->buf; the bytes read or -errno. procfs hands it
 * out a page at a time, so read until EOF. */
static ssize_t read_smaps(struct memmap *m)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)m->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	for (;;) {
		if (m->bufcap - len < 65536) {
			size_t cap = m->bufcap ? m->bufcap * 2 : 262144;
			char *p = cap <= MEMMAP_MAX_BYTES ? realloc(m->buf, cap) : NULL;
			if (!p) {
				close(fd);
				return -EFBIG;
			}
			m->buf = p;
			m->bufcap = cap;
		}
		ssize_t r = read(fd, m->buf + len, m->bufcap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	return (ssize_t)len;
}

int memmap_tick(struct memmap *m, uint64_t now_ns)
{
	if (m->nsnap && now_ns < m->next_ns)
		return 0;
	uint64_t t0 = mono_ns();
	m->read_ns = t0;
	ssize_t len = read_smaps(m);
	uint64_t cost = mono_ns() - t0;
	if (len < 0) {
		m->last_err = (int)len;
		m->next_ns = now_ns + m->interval_ns;
		return (int)len;
	}
	if (len == 0) {
		/* A zombie (or a kernel thread) has no mappings: nothing to show. */
		m->last_err = -ESRCH;
		m->next_ns = now_ns + m->interval_ns;
		return -ESRCH;
	}
	m->last_err = 0;
	m->cost_ns = cost;
	m->interval_ns = m->min_interval_ns;
	if (cost * MEMMAP_COST_FACTOR > m->interval_ns)
		m->interval_ns = cost * MEMMAP_COST_FACTOR;
	m->next_ns = now_ns + m->interval_ns;
	int e = memmap_parse(m, m->buf, (size_t)len, now_ns);
	return e ? e : 1;
}

void memmap_change(const struct memmap *m, int r, uint64_t since_ns, uint64_t *now_kb,
		   int64_t *delta_kb, double *span_s)
{
	*now_kb = 0;
	*delta_kb = 0;
	*span_s = 0;
	if (!m->nsnap || r < 0 || r >= m->n)
		return;
	int kept = m->nsnap < MEMMAP_HIST ? m->nsnap : MEMMAP_HIST;
	int last = (m->head + MEMMAP_HIST - 1) % MEMMAP_HIST;
	int first = last;
	/* Walk back to the oldest snapshot still inside the span. */
	for (int k = 1; k < kept; k++) {
		int s = (last + MEMMAP_HIST - k) % MEMMAP_HIST;
		if (m->times_ns[s] < since_ns)
			break;
		first = s;
	}
	const struct memmap_row *row = &m->rows[r];
	*now_kb = row->rss_kb[last];
	*delta_kb = (int64_t)row->rss_kb[last] - (int64_t)row->rss_kb[first];
	*span_s = (double)(m->times_ns[last] - m->times_ns[first]) / 1e9;
}
